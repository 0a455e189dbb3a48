/* rules.h - the decider's rules (decide.c), each name spelled once here.
 *
 * A rule is a guard over a job's decision facts and the step it takes
 * when it holds.  Each step the decider returns carries the rule that
 * chose it (struct step's `rule`), and why.c records it on the job: the
 * job's record (`flux dws job`, `flux dws job --why`) and the service's
 * debug log say which rule moved a job, in the words below.
 *
 * DWS_ENGINE_LOOK_RULES: what a job looked at (NEWS_LOOK) does next,
 * from its phase and facts alone, in the order they are tried: the first
 * whose guard chooses a step wins (decide.c's settle ()).  X (NAME,
 * guard, why): guard is decide.c's function that holds or not.  A look
 * rule whose guard goes through a family (after_done, teardown, the
 * Setup's start, Proposal's end, pre-staging's choice) names the step
 * only where no rule of that family (DWS_ENGINE_RULES) did.
 *
 * DWS_ENGINE_RULES: the rules of those families and of the news' answers
 * (a request, a failure, a timer), grouped by where they are chosen.
 * X (NAME, why).
 *
 * why: for people, "what held: what follows"; a reader adds the state
 * the job was in ("... in DataIn").  why.c's why_rule_name () is NAME in
 * lower case with '-' for '_' (the record's and the log's word).
 *
 * t/python/libdws/test_rule_coverage.py fails when a rule is fired by no
 * test, and lists how often each fired.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_RULES_H
#define DWS_ENGINE_RULES_H

#define DWS_ENGINE_LOOK_RULES(X)                                                               \
    X (SEEN, look_seen, "its Workflow was seen anew: what it shows is read first")            \
    X (STATE_DONE, look_state_done, "a state is complete: what follows it")                   \
    X (TOKEN_READ, look_token_read, "the workflow token was read: the prolog ends with it")   \
    X (TEARDOWN_READS_DONE, look_teardown_reads_done,                                          \
       "the reads before Teardown answered: Teardown is asked")                                \
    X (TEARDOWN_WANTED, look_teardown_wanted,                                                  \
       "torn down: the job failed or was ended, or Teardown was asked")                        \
    X (HOSTS_WRITTEN, look_hosts_written,                                                      \
       "its compute nodes are on the Workflow: the Servers are filled")                        \
    X (SERVERS_WRITTEN, look_servers_written, "every Servers is filled: Setup is asked")      \
    X (COMPUTES_WRITTEN, look_computes_written, "the Computes are filled: DataIn is asked")   \
    X (DATAOUT_HELD_WRITTEN, look_dataout_held_written,                                        \
       "DataOut with the held ssds is on the Workflow: the epilog ends, the nodes go back")    \
    X (PROPOSAL_DONE, look_proposal_done, "Proposal is done: what follows it")                \
    X (PRESTAGE, look_prestage, "pre-staging's rules (its wing) chose")                      \
    X (RELEASE_HELD, look_release_held,                                                        \
       "Fluxion holds its ssds down: its compute nodes go back")                               \
    X (RELEASE_DECIDED, look_release_decided, "its compute nodes' release is decided: DataOut")\
    X (DATAIN_PROGRESS, look_datain_progress, "its DataIn's progress was read")               \
    X (FORCE_READY_RESET, look_force_ready_reset, "DWS reset forceReady: it is asked again")   \
    X (SETUP_MAY_START, look_setup_may_start, "its nodes are known: the Setup starts")        \
    X (LIMIT_SHOWN, look_limit_shown, "its Workflow exists: dws-limit is removed")            \
    X (LIMIT_RECOUNTED, look_limit_recounted, "its user's storage use was counted again")

/* Pre-staging's wing: what a job in pre-staging does next (its storage
 * set up and filled before its nodes), consulted by the look rule
 * PRESTAGE in one place, in the order they are tried.  X (NAME, guard,
 * why), as DWS_ENGINE_LOOK_RULES.  A job that is not pre-staged never
 * reaches them.
 */
#define DWS_ENGINE_PRESTAGE_RULES(X)                                                           \
    X (PRESTAGED_COMPUTES_WRITTEN, look_prestaged_computes_written,                            \
       "pre-staged, its data in and the Computes filled: PreRun is asked")                     \
    X (RESENT_LET_GO, look_resent_let_go,                                                      \
       "its resources were asked for again: the pre-staged job is let go again")               \
    X (PRESTAGE_HOLD_DUE, look_prestage_hold_due,                                              \
       "its pre-staged ssd is picked: it is held down in Fluxion")                             \
    X (PRESTAGE_VERIFY_DUE, look_prestage_verify_due,                                          \
       "its hold applied: Fluxion is asked whether a job has any of it")                       \
    X (PRESTAGE_START, look_prestage_start, "pre-staged: its storage is placed")              \
    X (PRESTAGE_LOST, look_prestage_lost,                                                      \
       "a rabbit its pre-staged storage waits on went down: the job fails")                    \
    X (NODES_CAME, look_nodes_came, "its nodes came as it was let go of its chassis")         \
    X (ROOM_CAME, look_room_came, "room may have come for its pre-staged storage")

#define DWS_ENGINE_RULES(X)                                                                    \
    /* --- a sighting of its Workflow (seen, gone) --- */                                      \
    X (TAKEN_UP, "the service started and found its Workflow: taken up")                      \
    X (FINALIZER_REMOVE, "its Workflow is being deleted by us: our finalizer is removed")     \
    X (DELETING_OUTSIDE, "its Workflow is being deleted outside of Flux: the job fails")      \
    X (SEEN_READ, "its Workflow changed: its status is read")                                  \
    X (GIVEN_UP_DELETED, "its given-up Workflow is deleted: it is created again")             \
    X (DELETED_FORGET, "its Workflow is deleted: the job is forgotten")                        \
    X (VANISHED_EARLY, "its Workflow vanished before any storage existed: created again")     \
    X (VANISHED_IN_EPILOG, "its Workflow vanished in the epilog: the epilog ends")              \
    X (VANISHED_FAILED, "its Workflow vanished after the job failed: forgotten")               \
    X (DELETED_OUTSIDE, "its Workflow was deleted outside of Flux while in use: the job fails")\
    /* --- a state complete (after_done) --- */                                                \
    X (SETUP_DONE_PRESTAGED, "pre-staged: Setup is done, DataIn before its nodes")             \
    X (SETUP_DONE, "Setup is done: the Computes are filled")                                   \
    X (DATAIN_DONE_UNPIN, "its DataIn is done and its nodes did not come: it is let go")      \
    X (DATAIN_DONE_NODES_CAME, "pre-staged, its nodes came: the Computes are filled")         \
    X (DATAIN_DONE_PRESTAGED, "pre-staged, its data is in: the job is let go to the scheduler")\
    X (DATAIN_DONE, "DataIn is done: PreRun is asked")                                         \
    X (PRERUN_DONE, "PreRun is done: the prolog ends, the job runs")                           \
    X (POSTRUN_DONE_RELEASE, "PostRun is done: its compute nodes go back before DataOut")     \
    X (POSTRUN_DONE, "PostRun is done: DataOut is asked")                                      \
    X (DATAOUT_DONE, "DataOut is done: Teardown is asked")                                     \
    /* --- Teardown (teardown, delete_when_ready) --- */                                       \
    X (EPILOG_MARK, "its epilog began: marked on the Workflow")                                \
    X (TORN_DOWN_DELETE, "Teardown is done and its epilog began: the Workflow is deleted")    \
    X (TORN_DOWN_GIVEN_UP, "Teardown is done for storage given up: deleted, to be made again")\
    /* --- Proposal's end (proposal, proposal_ready) and pre-staging's choice --- */           \
    X (BREAKDOWNS_UNREAD, "its Workflow lists a breakdown not read yet: it is read")           \
    X (PRESTAGE_WANTED, "pre-staging is wanted: what decides it is read")                     \
    X (PRESTAGE_NOT_WANTED, "pre-staging is not wanted: the usual way")                       \
    X (PRESTAGE_REFUSED, "it asked to be pre-staged and cannot be: refused")                  \
    X (PRESTAGE_UNFIT, "its storage cannot be placed before its nodes: the usual way")        \
    X (PRESTAGE_TOO_BIG, "it asks for more nodes than the instance has: not pre-staged")      \
    X (PRESTAGE_FULL, "the site's bound on storage held ahead of nodes: not pre-staged")      \
    X (PRESTAGE_CHOSEN, "pre-staged: Setup and DataIn before its nodes")                      \
    X (PRESTAGE_RECORD, "pre-staged: recorded on its Workflow first")                         \
    X (RESOURCES_REFUSAL, "pre-staging was refused: its resources say why")                   \
    X (RESOURCES, "Proposal is done: its resources go to the scheduler")                      \
    X (PRESTAGE_PICK, "pre-staged: its ssd is picked")                                         \
    X (PRESTAGE_SERVERS, "pre-staged, its ssd is free: the Servers are filled")               \
    /* --- the Setup's start (setup_start) --- */                                              \
    X (MAP_UNKNOWN, "the Setup waits for the rabbit map (SystemConfiguration)")                \
    X (LUSTRE_SPREAD, "its Lustre goes where Fluxion found room: its R is read")              \
    X (HOSTS_UNRECORDED, "its nodes are known: recorded on the Workflow")                     \
    X (HOSTS_WITH_SETUP, "its nodes are known: the Servers are filled, they go with Setup")   \
    X (HOSTS_RECORDED, "its nodes are on the Workflow: the Servers are filled")               \
    /* --- the look rules' own families --- */                                                 \
    X (DATAIN_STALLED, "its DataIn did not move for datain_stall_timeout: the job fails")     \
    X (DATAIN_MOVED, "its DataIn moved: read again later")                                     \
    X (NODES_ON_CHASSIS, "its nodes came on its storage's chassis: its storage is kept")      \
    X (NODES_ELSEWHERE, "its nodes came elsewhere: its storage is set up again for them")     \
    X (LIMIT_ROOM, "its user's storage use allows it now: its Workflow is created")           \
    X (LIMIT_STILL, "it still waits for its user's storage use to fall")                      \
    X (ROOM_REWEIGH, "the rabbits are known now: pre-staging is weighed again")               \
    X (ROOM_PICK, "room may have come: its pre-staged ssd is picked")                         \
    /* --- a request, or what a restart found of one (next_request) --- */                     \
    X (OVER_LIMIT, "over [rabbit.limits]: it waits for its user's storage use to fall")       \
    X (CREATE, "dws.create: its Workflow is created")                                          \
    X (ENDED_WAITING, "it ended while it waited for its user's storage use")                  \
    X (TEARDOWN_ASKED, "torn down: the job ended (dws.teardown)")                              \
    X (EPILOG_BEFORE_CREATED, "its epilog began before its Workflow was made: torn down then") \
    X (EPILOG_BEFORE_RUN, "torn down: the job ended before it ran (cancelled, or an exception)")\
    X (EPILOG_BEGAN, "the job ran and its epilog began: PostRun is asked")                     \
    X (SETUP_REPEATED, "dws.setup came again: the prolog ends again")                          \
    X (RESOURCES_LOST, "the job manager lost its resources: they are sent again")             \
    X (ABORTED, "dws.abort: the job manager ended the epilog; Teardown after the reads")      \
    X (ABORTED_EARLY, "dws.abort before its Workflow existed: the epilog is ended")           \
    X (CREATE_REFUSED, "dws.create was refused: the job is forgotten")                         \
    X (CREATE_JOINED, "dws.create came again while the create is out: answered with it")      \
    X (CREATE_ANSWERED, "dws.create came again: answered, what was lost sent again")          \
    X (SETUP_CAME, "dws.setup: its nodes are known")                                           \
    X (SETUP_ANSWERED, "dws.setup came again: answered, the prolog-remove again")             \
    X (POST_RUN_CAME, "dws.post_run: its epilog began")                                        \
    X (POST_RUN_REPEATED, "dws.post_run came again: the epilog-remove again")                 \
    X (ENDED_AWAY, "it ended while no service watched: torn down")                             \
    X (RUNNING_UNREAD, "found running after a restart without its nodes: its R is read")      \
    X (EPILOG_FOUND, "found in its epilog after a restart: the epilog begins")                \
    X (RELEASED_FOUND, "found released after a restart with its epilog active: it ends")      \
    X (R_FOR_HOLD, "its R was read: the ssds it names are held")                               \
    X (R_FOR_LUSTRE, "its R was read: its Lustre is placed where Fluxion chose")              \
    X (R_FOR_SETUP, "its R was read for a lost dws.setup: its nodes are known")               \
    X (JOBSPEC_READ, "its jobspec was read: its Workflow is made again")                      \
    X (R_HOSTS, "its R was read: its nodes are recorded")                                      \
    X (CREATE_TO_COME, "its dws.create is still to come: forgotten until then")               \
    X (CREATE_FROM_JOBSPEC, "its Workflow is created from its jobspec")                        \
    X (UNMADE, "its Workflow cannot be made again: the job fails")                             \
    /* --- a failure, a timeout (next_failure, on_timer, culprits) --- */                      \
    X (ERROR_RELEASED_FIRST, "DataOut failed, its held ssds seen on the Workflow: released first")\
    X (POSTRUN_ERROR, "PostRun failed: who still mounts is read, then the job fails")         \
    X (WORKFLOW_ERROR, "its Workflow went to Error: the job fails")                            \
    X (FAILED_RELEASED, "the job failed after its nodes went back: recorded, torn down")      \
    X (FAILED_AGAIN, "the job failed again: logged, torn down")                                \
    X (FAILED, "the job failed: its exception is raised, torn down")                           \
    X (TIMEOUT, "the state timed out: who is late is read")                                    \
    X (TEARDOWN_AFTER, "teardown_after expired: DataOut is skipped, torn down")               \
    X (RELEASE_UNCONFIRMED, "Fluxion did not confirm its ssd holds: its nodes stay")          \
    X (PRESTAGE_TIMER_WEIGH, "its wait ended: pre-staging is weighed again")                  \
    X (PRESTAGE_TIMER_PICK, "its wait ended: its pre-staged ssd is picked again")             \
    X (DATAIN_TIMER, "its DataIn's progress is read")                                          \
    X (NODE_WAIT_EXPIRED, "its nodes did not come within prestage_node_wait: given up")       \
    X (TRANSIENT_PRERUN, "a TransientCondition in PreRun lasted: who is late is read")        \
    X (TRANSIENT_POSTRUN, "a TransientCondition in PostRun lasted: who still mounts is read") \
    X (TRANSIENT_FAIL, "a TransientCondition lasted: the job fails")                           \
    X (WRITE_FAILED, "a write for its Setup failed: the job fails")                            \
    X (CREATE_FAILED, "the create of its Workflow failed: the job fails")                      \
    X (CREATE_FAILED_FORGET, "the create of its Workflow failed: forgotten")                   \
    X (FORCE_REFUSED, "Kubernetes refused forceReady: the job fails")                          \
    X (LUSTRE_TIMEOUT, "Lustre cannot lose a rabbit: the Setup fails whole")                  \
    X (OVER_TOLERANCE, "more nodes are late than its failure tolerance: the job fails")       \
    X (WITHIN_TOLERANCE, "the late nodes are within its failure tolerance: given up")         \
    X (POSTRUN_TIMEOUT_DRAIN, "PostRun timed out: the nodes still mounted are drained")       \
    X (POSTRUN_ERROR_DRAIN, "PostRun failed: the nodes still mounted are drained")            \
    X (POSTRUN_ERROR_LATE, "PostRun failed after it moved on: the job fails")

enum rule {
    RULE_NONE,
#define RULE_LOOK_ENUM(name, guard, why) RULE_##name,
    DWS_ENGINE_LOOK_RULES (RULE_LOOK_ENUM)
    DWS_ENGINE_PRESTAGE_RULES (RULE_LOOK_ENUM)
#undef RULE_LOOK_ENUM
#define RULE_ENUM(name, why) RULE_##name,
    DWS_ENGINE_RULES (RULE_ENUM)
#undef RULE_ENUM
    RULE_COUNT,
};

#endif /* !DWS_ENGINE_RULES_H */
