/* explain.c - the table of failures and their plain sentences, and its
 * small pattern matcher (explain.h).
 *
 * The texts come from DWS and nnf-sos (spec/dws-nnf-behaviour.md 1.14,
 * 2.2, 2.4, 3.5, 4.7, 5; the emulator says them word for word), from the
 * engine (engine/verbs/fault.c, progress.c, request.c) and from the jobtap
 * plugin's machine (jobsm.c).  Each row's example is such a text as a
 * job's note carries it; the tests check that the first row matching it
 * is the row itself, so a new row in the wrong place fails them.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "jobwire.h"
#include "wire.h"

struct row {
    const char *name;
    const char *pattern;
    const char *sentence;
    const char *example;
};

/* Prefixes of the notes the rows' examples are written with. */
#define DWS_NOTE DWS_WIRE_NOTE_PREFIX      /* the service's notes */
#define JOBSM_NOTE DWS_JOBWIRE_NOTE_PREFIX /* the jobtap plugin's */
#define WEBHOOK JOBSM_NOTE "admission webhook \"vworkflow.kb.io\" denied the request: "
#define WF_ERROR DWS_NOTE "workflow hit an error: DW Directive 0: "

/* What to do when nothing but a retry or an administrator can help. */
#define RETRY "Resubmit the job; if it fails again, tell your administrator."

/* Specific before general: the first matching row wins.  DWS' own
 * messages come before the rows for flux-dws' notes that carry them (a
 * TransientCondition that lasted too long, a refused Kubernetes write),
 * and those before the last rows, which only know DWS' error type.
 */
static const struct row rows[] = {
    /* --- #DW directives refused (DWS' ruleset and webhook, our checks) --- */
    {"directive-type", "argument 'type' invalid string '{}'",
     "'{}' is not a rabbit file system type. Use type=xfs, gfs2, lustre or raw in the #DW"
     " directive.",
     WEBHOOK "argument 'type' invalid string 'zfs'"},
    {"directive-capacity", "argument 'capacity' invalid string '{}'",
     "'{}' is not a capacity rabbits accept. Write a whole number and a unit, such as"
     " capacity=100GiB.",
     WEBHOOK "argument 'capacity' invalid string '10G'"},
    {"directive-name", "argument 'name' invalid string '{}'",
     "'{}' is not a valid name=. Start it with a lowercase letter, followed by at least one"
     " lowercase letter, digit or dash.",
     WEBHOOK "argument 'name' invalid string 'Scratch'"},
    {"directive-argument-unknown", "unsupported argument '{}'",
     "'{}' is not an argument this #DW directive takes. Check its spelling in the rabbit"
     " documentation.",
     WEBHOOK "unsupported argument 'capcity'"},
    {"directive-argument-missing", "missing required argument '{}'",
     "The #DW directive lacks a required argument (DWS names it by the pattern {}). Add it and"
     " resubmit.",
     WEBHOOK "missing required argument '^capacity$'"},
    {"directive-argument-repeated", "repeated argument '{}' in directive",
     "The argument '{}' is given twice in one #DW directive. Give it once.",
     WEBHOOK "repeated argument 'type' in directive '#DW jobdw type=xfs type=xfs capacity=1GiB"
             " name=scratch'"},
    {"directive-argument-value", "argument '{}' ",
     "The value of the #DW directive argument '{}' is missing or not allowed. Fix it and"
     " resubmit.",
     WEBHOOK "argument 'requires' invalid string 'copyoffload' in list 'copyoffload'"},
    {"directive-name-unique", "value '{}' must be unique within",
     "The name '{}' is used by more than one #DW directive of the job. Give each directive its"
     " own name=.",
     WEBHOOK "value 'scratch' must be unique within 'jobdw_name'"},
    {"directive-invalid", "invalid directive '{}'",
     "'{}' is not a #DW directive rabbits accept. Use jobdw, persistentdw, create_persistent,"
     " destroy_persistent, copy_in, copy_out or container.",
     WEBHOOK "invalid directive '#DW jobdwx type=xfs'"},
    {"directive-prefix", "missing '#DW' prefix in directive",
     "Every rabbit directive must start with #DW. Check the dw attribute, or the #DW lines of"
     " your job script.",
     WEBHOOK "missing '#DW' prefix in directive 'jobdw type=xfs capacity=1GiB name=scratch'"},
    {"directive-malformed", "Malformed #DW directives",
     "The job's dw attribute holds no usable #DW directive. Give one or more #DW directives, as"
     " a string or a list of strings.",
     JOBSM_NOTE "Malformed #DW directives: dw must be a string or a list of strings"},
    {"directive-ruleset", "unable to find ruleset in namespace",
     "The rabbit system has no #DW rules installed, so it accepts no #DW directive. Tell your"
     " administrator.",
     WEBHOOK "unable to find ruleset in namespace: dws-system"},
    {"directive-single-persistent",
     "only a single create_persistent or destroy_persistent directive",
     "A create_persistent or destroy_persistent directive must be the only #DW directive of its"
     " job. Submit it as a job of its own.",
     WF_ERROR "User error: only a single create_persistent or destroy_persistent directive is"
              " allowed per workflow"},
    {"directive-single-container", "only a single container directive",
     "A job may have only one #DW container directive. Remove the others and resubmit.",
     WF_ERROR "User error: only a single container directive is supported per workflow"},
    {"capacity-required", "requires 'capacity' argument",
     "A #DW create_persistent needs a capacity= argument, such as capacity=1TiB. Add it and"
     " resubmit.",
     WF_ERROR "User error: creating persistent storage requires 'capacity' argument"},
    {"capacity-zero", "'capacity' must be a non-zero value",
     "capacity= must be more than zero, such as capacity=100GiB. Fix it and resubmit.",
     WF_ERROR "Internal error: 'capacity' must be a non-zero value"},
    {"capacity-mgt", "MGT does not accept 'capacity' argument",
     "A create_persistent with a standalone MGT profile takes no capacity= argument. Remove it"
     " and resubmit.",
     WF_ERROR "User error: creating persistent MGT does not accept 'capacity' argument"},
    {"profile-mgt", "standaloneMgtPoolName option can only be used with",
     "The storage profile you named is for a standalone MGT and works only with #DW"
     " create_persistent. Choose another profile= and resubmit.",
     WF_ERROR "User error: standaloneMgtPoolName option can only be used with"
              " 'create_persistent' directive"},
    {"directive-storage", "invalid DW directive",
     "DWS could not make storage from one of the job's #DW directives. Check its type= and"
     " other arguments, then resubmit.",
     WF_ERROR "Internal error: invalid DW directive"},
    {"persistent-create-owner", "only the instance owner may create persistent storage",
     "Only the owner of this Flux instance may create persistent storage here. Ask your"
     " administrator to create it for you.",
     JOBSM_NOTE "only the instance owner may create persistent storage (#DW create_persistent)"},
    {"persistent-destroy-owner", "only its owner may destroy persistent storage",
     "Only the user who created a persistent storage may destroy it, shared or not; the"
     " message names that user. Check the name= of your #DW destroy_persistent, or ask them.",
     JOBSM_NOTE "only its owner may destroy persistent storage (#DW destroy_persistent):"
                " 'proj' belongs to alice (uid 1001)"},
    {"tolerance", "dw_failure_tolerance must be",
     "The job's dw_failure_tolerance must be a whole number of nodes (0 or more). Fix it and"
     " resubmit.",
     JOBSM_NOTE "dw_failure_tolerance must be a positive integer"},
    {"release-computes", "dw_release_computes must be",
     "dw_release_computes must be after-unmount or after-teardown. Fix it, or leave it out, and"
     " resubmit.",
     JOBSM_NOTE "dw_release_computes must be \"after-unmount\" or \"after-teardown\", got"
                " \"never\""},

    /* --- profiles ---------------------------------------------------------- */
    {"storage-profile", "Unable to find NnfStorageProfile: {}",
     "There is no storage profile named '{}'. Check the profile= of your #DW directive, or ask"
     " your administrator which profiles exist.",
     WF_ERROR "User error: Unable to find NnfStorageProfile: fast"},
    {"storage-profile-default", "default NnfStorageProfile",
     "The system has no single default storage profile, so no rabbit storage can be made. Tell"
     " your administrator.",
     WF_ERROR "Internal error: Unable to find a default NnfStorageProfile to use"},
    {"dm-profile", "Unable to find NnfDataMovementProfile: {}",
     "There is no data movement profile named '{}'. Check the profile= of your copy_in or"
     " copy_out, or ask your administrator which profiles exist.",
     DWS_NOTE "workflow hit an error: DW Directive 1: User error: Unable to find"
              " NnfDataMovementProfile: slow"},
    {"dm-profile-default", "default NnfDataMovementProfile",
     "The system has no single default data movement profile, so copy_in and copy_out cannot"
     " run. Tell your administrator.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: More than one default"
              " NnfDataMovementProfile found; unable to pick one: [a b]"},

    /* --- persistent storage ------------------------------------------------ */
    /* persistentdw (nnf-sos #609; its create and breakdown checks say the
     * same): the annotation lets other users in (#616); destroy_persistent
     * (lower case, next row) stays the owner's whatever the annotation */
    {DWS_EXPLAIN_ROW_PERSISTENT_NOT_SHARED, "User ID does not match existing persistent storage",
     "That persistent storage belongs to another user, who created it. Its owner or an admin"
     " can share it: kubectl annotate persistentstorageinstance NAME"
     " dataworkflowservices.github.io/ignore-uid=true.",
     WF_ERROR "User error: User ID does not match existing persistent storage"},
    {"persistent-not-owner", "ser ID does not match existing persistent storage",
     "That persistent storage belongs to another user; only its owner may destroy it."
     " Check the name= of your #DW directive.",
     WF_ERROR "User error: user ID does not match existing persistent storage"},
    {"persistent-deleting", "ersistent storage instance '{}' is deleting",
     "The persistent storage '{}' is being deleted and can no longer be used. Create it again,"
     " or use another.",
     WF_ERROR "User error: Persistent storage instance 'scratch' is deleting"},
    {"persistent-in-use", "persistent storage cannot be deleted while in use",
     "The persistent storage is still in use by other jobs, so it cannot be destroyed yet."
     " Resubmit the destroy_persistent job once they have ended.",
     DWS_NOTE "workflow in TransientCondition for more than 10 s: DW Directive 0: User error:"
              " persistent storage cannot be deleted while in use"},
    {"persistent-inactive", "PersistentStorage is not active",
     "The persistent storage is not ready: it is still being created, or its creation failed."
     " Wait for its create_persistent job to end, then resubmit.",
     WF_ERROR "User error: PersistentStorage is not active"},
    {"persistent-missing", "persistent storage instance '{}' not found",
     "No persistent storage named '{}' exists. Check the name, or create it first with a #DW"
     " create_persistent job.",
     WF_ERROR "User error: persistent storage instance 'scratch' not found"},
    {"persistent-missing-psi", "PersistentStorageInstance '{}' not found",
     "No persistent storage named '{}' exists. Check the name, or create it first with a #DW"
     " create_persistent job.",
     WF_ERROR "User error: PersistentStorageInstance 'scratch' not found"},
    {"persistent-missing-ps", "PersistentStorage '{}' not found",
     "No persistent storage named '{}' exists. Check the name, or create it first with a #DW"
     " create_persistent job.",
     DWS_NOTE "workflow in TransientCondition for more than 10 s: DW Directive 0: User error:"
              " PersistentStorage 'scratch' not found"},
    {"persistentdw-missing", "persistentdw directive mentioning '{}' not found",
     "The job uses persistent storage '{}' in a copy or container directive, but has no #DW"
     " persistentdw directive for it. Add one and resubmit.",
     WF_ERROR "User error: persistentdw directive mentioning 'scratch' not found"},
    {"jobdw-missing", "jobdw directive mentioning '{}' not found",
     "Your #DW container directive refers to '{}', but no #DW jobdw directive has that name=."
     " Fix the name, or add the jobdw directive.",
     WF_ERROR "User error: jobdw directive mentioning 'scratch' not found"},
    {"job-storage-missing", "job storage instance '{}' not found",
     "A copy_in or copy_out path names job storage '{}', but no #DW jobdw directive has that"
     " name=. Fix the $DW_JOB_ path or the name=.",
     WF_ERROR "User error: job storage instance 'scratch' not found"},

    /* --- data movement ----------------------------------------------------- */
    {"dm-raw", "data movement can not be used with raw allocations",
     "copy_in and copy_out cannot use type=raw storage, which has no file system. Use xfs,"
     " gfs2 or lustre, or drop the copy directive.",
     WF_ERROR "User error: data movement can not be used with raw allocations"},
    {"dm-lustre-path", "global Lustre file system containing '{}' not found",
     "'{}' is not on any global Lustre file system the rabbits can reach. Check that path in"
     " your copy_in, copy_out or container directive.",
     WF_ERROR "User error: global Lustre file system containing '/p/lustre9/me' not found"},
    {"dm-staging-path", "Staging parameter '{}' is invalid",
     "The copy_in or copy_out path '{}' is not valid. Start it with $DW_JOB_<name>/,"
     " $DW_PERSISTENT_<name>/ or a global Lustre path.",
     DWS_NOTE "workflow hit an error: DW Directive 1: User error: Staging parameter"
              " '$DW_JOB/out' is invalid"},
    {"dm-no-directive", "no directive matching '{}' found in workflow",
     "A copy_in or copy_out path names storage '{}' that no #DW directive of the job makes. Fix"
     " the path, or add the directive.",
     DWS_NOTE "workflow hit an error: DW Directive 1: User error: no directive matching"
              " 'scratch' found in workflow"},
    {"dm-copy-in", "data movement operation failed during 'DataIn'",
     "Copying data in (copy_in) failed, so the job did not run. Check the source and"
     " destination of copy_in and their permissions, then resubmit.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: data movement operation"
              " failed during 'DataIn', message: dcp: No such file or directory"},
    {"dm-copy-out", "data movement operation failed during 'DataOut'",
     "Copying results out (copy_out) failed after the job ran, so results may be missing at"
     " the destination. Check the copy_out paths and their permissions.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: data movement operation"
              " failed during 'DataOut', message: no space left on device"},
    {"dm-offload", "Internal error: data movement failed",
     "A data movement the job started itself (copy offload) failed. Check the paths it was"
     " given and their permissions, then resubmit.",
     DWS_NOTE "workflow hit an error: DW Directive 0: Internal error: data movement failed"},

    /* --- containers --------------------------------------------------------- */
    {"container-profile-restricted", "container profile '{}' is restricted to",
     "You may not use the container profile '{}': it is kept for another user or group. Use"
     " another profile=, or ask your administrator.",
     WF_ERROR "User error: container profile 'mpi' is restricted to UserID 1001"},
    {"container-storage-required", "storage '{}' in container profile '*' is not optional",
     "Your #DW container directive lacks {}, which its container profile requires. Add it as an"
     " argument and resubmit.",
     WF_ERROR "User error: storage 'DW_GLOBAL_lus' in container profile 'copy-offload' is not"
              " optional: storage argument not found in the supplied arguments"},
    {"container-storage-unknown", "storage '{}' not found in container profile",
     "Your #DW container directive passes {}, which its container profile does not list."
     " Remove it, or use a name the profile expects.",
     WF_ERROR "User error: storage 'DW_JOB_extra' not found in container profile 'mpi'"},
    {"container-argument", "unrecognized container argument: {}",
     "'{}' is not a #DW container argument. Use DW_JOB_<x>=, DW_PERSISTENT_<x>= or"
     " DW_GLOBAL_<x>= arguments.",
     WF_ERROR "User error: unrecognized container argument: JOB_scratch"},
    {"container-profile", "container profile '{}' not found",
     "There is no container profile named '{}'. Check the profile= of your #DW container"
     " directive, or ask your administrator which profiles exist.",
     WF_ERROR "User error: container profile 'mpi-example' not found"},
    {"container-profile-invalid", "no valid container profile found",
     "The container profile named in your #DW container directive does not exist or cannot be"
     " used. Check its profile=, or ask your administrator.",
     WF_ERROR "Internal error: no valid container profile found"},
    {"container-filesystem", "unsupported container filesystem: {}",
     "Containers cannot use {} storage. Give the #DW container directive lustre, gfs2 or raw"
     " storage instead.",
     WF_ERROR "User error: unsupported container filesystem: xfs"},
    {"container-ports-config", "Invalid NnfPortManager configuration",
     "The rabbit system has no network port settings for containers, so no container can run."
     " Tell your administrator.",
     DWS_NOTE "workflow hit an error: DW Directive 1: User error: could not request ports for"
              " container workflow: Invalid NnfPortManager configuration"},
    {"container-ports", "could not request ports for container workflow",
     "No network ports were free for your containers. " RETRY,
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: could not request ports"
              " for container workflow: InsufficientResources"},
    {"container-start", "user container(s) failed to start after {} seconds",
     "Your user containers did not start within {} seconds. Check the container image and"
     " profile, or ask your administrator.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: user container(s) failed"
              " to start after 300 seconds"},
    {"container-complete", "user container(s) failed to complete after {} seconds",
     "Your user containers did not finish within {} seconds after the job and were stopped."
     " Make them exit when the job's work is done.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: user container(s) failed"
              " to complete after 300 seconds"},
    {"container-run", "user container(s) failed to run successfully",
     "Your user containers exited with an error. Check their output and the command in the"
     " container profile, then resubmit.",
     DWS_NOTE "workflow hit an error: DW Directive 1: Internal error: user container(s) failed"
              " to run successfully after 3 attempts"},

    /* --- capacity and placement -------------------------------------------- */
    {"capacity-maximum", "Requested a total of {} GiB of ",
     "The job asks for {} GiB of rabbit storage per node, more than this system allows. Ask for"
     " less capacity (for lustre, more nodes also lower it).",
     JOBSM_NOTE "Requested a total of 2048 GiB of xfs storage per node but max is 1024 GiB per"
                " node"},
    {"capacity-lustre", "Lustre needs {} GiB",
     "The Lustre file system needs {} GiB of rabbit storage, more than the rabbits it may use"
     " hold. Ask for less capacity.",
     JOBSM_NOTE "Lustre needs 41984 GiB of rabbit ssd (the file system and its headroom), more"
                " than all 8 rabbits hold (32768 GiB)"},
    {"capacity-reserved", "Fluxion reserved ",
     "The scheduler reserved less rabbit storage than the job's Lustre file system needs. "
     RETRY,
     DWS_NOTE "cannot place rabbit storage: Fluxion reserved 100 GiB on 2 rabbit(s), too little"
              " for 400 GiB of OSTs plus the MDT/MGT"},
    {"no-rabbit-nodes", "no compute nodes attached to rabbits",
     "None of the job's nodes is attached to a rabbit, so it cannot have rabbit storage. Ask"
     " for nodes that have rabbits and resubmit.",
     DWS_NOTE "cannot place rabbit storage: the job has no compute nodes attached to rabbits"},
    {"place-lustre", "cannot place Lustre",
     "Flux could not find the rabbit storage the scheduler reserved for the job's Lustre file"
     " system. " RETRY,
     DWS_NOTE "cannot place Lustre: the job's R holds no rabbit ssd (no scheduling graph with"
              " ssd vertices)"},
    {"place-storage", "cannot place rabbit storage",
     "Flux could not fit the job's rabbit storage on the rabbits of its nodes. Ask for less"
     " capacity, or resubmit; if it fails again, tell your administrator.",
     DWS_NOTE "cannot place rabbit storage: allocation set 0 (xfs): the allocations add up to"
              " more than 9223372036854775807 bytes"},
    {"servers-not-met", "Allocation request does not meet directive requirements",
     "The rabbit storage Flux assigned to the job did not match what its #DW directives need. "
     RETRY,
     DWS_NOTE "workflow hit an error: DW Directive 0: WLM error: Allocation request does not"
              " meet directive requirements"},
    {"servers-not-satisfied", "storage directive requirements were not satisfied",
     "The rabbits assigned to the job could not provide the storage its #DW directives ask"
     " for. Ask for less capacity, or resubmit; tell your administrator if it recurs.",
     DWS_NOTE "workflow hit an error: DW Directive 0: WLM error: storage directive"
              " requirements were not satisfied"},
    {"force-ready-refused", "DWS refused forceReady after giving up",
     "Nodes were left out of the job's rabbit storage, but DWS refused to go on without"
     " them. " RETRY,
     "File system creation took too long: DWS refused forceReady after giving up"
     " compute-04: forceReady refused"},
    {"setup-timeout", "File system creation took too long",
     "The rabbits did not create the job's file system in time (they may be busy or short of"
     " space). " RETRY,
     "File system creation took too long"},

    /* --- mounts on the compute nodes --------------------------------------- */
    {"mount-failed", "unable to mount file system",
     "The rabbit file system could not be mounted on the job's compute node(s). " RETRY,
     "internal error: Node: compute-02: mount/unmount failed: unable to mount file system:"
     " mount: /mnt/nnf: no such device"},
    {"mount-computes", "could not mount file system on compute nodes",
     "The rabbit file system could not be mounted on the job's compute node(s). " RETRY,
     WF_ERROR "Internal error: could not mount file system on compute nodes"},
    {"mount-unanswered", "ClientMount has not been reconciled after {} seconds",
     "A compute node did not answer the request to mount rabbit storage for {} seconds. "
     RETRY,
     "internal error: Node: compute-03: ClientMount has not been reconciled after 300"
     " seconds"},
    {"mount-timeout", "timed out waiting for mounts",
     "The rabbit file system was not mounted on the job's compute node(s) in time. " RETRY,
     "timed out waiting for mounts"},
    {"mount-transient", "workflow in TransientCondition too long in PreRun",
     "Mounting the rabbit file system on the job's compute node(s) kept failing. " RETRY,
     DWS_NOTE "workflow in TransientCondition too long in PreRun"},
    {"unmount-failed", "unable to unmount",
     "The rabbit file system could not be unmounted from the job's compute node(s), which may"
     " have been drained. Check your copy_out results; tell your administrator if it recurs.",
     "internal error: Node: compute-02: mount/unmount failed: unable to unmount file system:"
     " umount: /mnt/nnf: target is busy"},
    {"unmount-timeout", "unmounts timed out, skipping data movement",
     "The rabbit file system was not unmounted from the job's nodes in time, so copy_out was"
     " skipped and results on rabbit storage are lost. " RETRY,
     "unmounts timed out, skipping data movement"},

    /* --- after the job ------------------------------------------------------ */
    {"teardown-after", "skipping rabbit data movement",
     "copy_out did not finish within the site's time limit for it (teardown_after), so"
     " results may be missing at the destination. Copy less data, or ask your administrator.",
     "skipping rabbit data movement"},
    {"epilog-timeout", "DWS epilog timed out",
     "The rabbit work after the job (unmount, copy_out, teardown) took too long and was"
     " stopped, so results may be missing. Tell your administrator.",
     "DWS epilog timed out"},

    /* --- flux-dws' own steps ----------------------------------------------- */
    {"workflow-deleted", "deleted outside of Flux",
     "The job's Workflow was deleted outside Flux (by an administrator or a tool), so its"
     " rabbit storage is gone. Resubmit the job.",
     DWS_NOTE "workflow fluxjob-123 was deleted outside of Flux"},
    {"service-down", "is the flux-coral2-dws service loaded?",
     "The rabbit (dws) service was not running when the job needed it. Resubmit later, and"
     " tell your administrator.",
     JOBSM_NOTE "dws.create RPC could not be sent. Admins: is the flux-coral2-dws service"
                " loaded?"},
    {"malformed-rpc", "received malformed dws.",
     "Flux and its rabbit service could not understand each other (their versions may"
     " differ). Tell your administrator.",
     JOBSM_NOTE "received malformed dws.resource-update RPC"},
    {"read-R", "could not read R: ",
     "Flux could not read the job's resources to set up its rabbit storage. " RETRY,
     JOBSM_NOTE "could not read R: No such file or directory"},
    {"transient", "workflow in TransientCondition for more than {} s",
     "The rabbit storage service reported a problem that did not clear within {} seconds. "
     RETRY,
     DWS_NOTE "workflow in TransientCondition for more than 300 s: DW Directive 0: Internal"
              " error: "},
    {"kubernetes", DWS_NOTE "cannot ",
     "Flux could not carry out a step of the job's rabbit storage in Kubernetes (the message"
     " says which). " RETRY,
     DWS_NOTE "cannot fill the Computes: etcdserver: request timed out"},

    /* --- what only DWS' error type tells --------------------------------- */
    {"webhook", "admission webhook \"*\" denied the request",
     "DWS refused the job's Workflow. If the message names a #DW directive or argument, fix it"
     " and resubmit; otherwise tell your administrator.",
     JOBSM_NOTE "admission webhook \"vworkflow.kb.io\" denied the request: Spec.Hurry:"
                " Forbidden: the hurry flag may not be set on creation"},
    {"dws-user", "DW Directive *: User error: ",
     "DWS found a problem with the job's #DW directives. Fix what the message names and"
     " resubmit.",
     WF_ERROR "User error: disk died in Setup"},
    {"dws-wlm", "DW Directive *: WLM error: ",
     "DWS refused a request Flux made for the job (a Flux and rabbit integration problem). "
     RETRY,
     DWS_NOTE "workflow hit an error: DW Directive 2: WLM error: unable to create/update"
              " Container Jobs: wlm error: the Computes resources does not specify any compute"
              " nodes"},
    {"dws-internal", "DW Directive *: Internal error: ",
     "The rabbit storage software hit an internal error. " RETRY,
     WF_ERROR "Internal error: "},
};

#define NROWS ((int)(sizeof (rows) / sizeof (rows[0])))

/* --- the matcher --------------------------------------------------------- */

/* The length of the literal at p: up to a `*`, a `{}` or the end. */
static size_t literal_len (const char *p)
{
    size_t n = 0;
    while (p[n] && p[n] != '*' && !(p[n] == '{' && p[n + 1] == '}'))
        n++;
    return n;
}

/* The first place at or after `from` where lit (len > 0 bytes) starts in
 * text, or -1.  Each candidate costs at most len compares.
 */
static long find (const char *text, size_t tlen, size_t from, const char *lit, size_t len)
{
    while (from + len <= tlen) {
        const char *c = memchr (text + from, lit[0], tlen - len + 1 - from);
        if (!c)
            return -1;
        if (!memcmp (c, lit, len))
            return (long)(c - text);
        from = (size_t)(c - text) + 1;
    }
    return -1;
}

struct span {
    size_t start, len;
};

/* Does pattern match text?  Each literal is taken at its first place after
 * what precedes it, as far as the wildcards in between need: for a
 * pattern without an end anchor that finds a match whenever there is one,
 * and it never goes back, so the cost is bounded by the text's length
 * times the pattern's.  *cap is the first `{}` with the wildcards next to
 * it, from the end of the literal before it to the start of the one after
 * it (the text's start or end where there is none); {0, 0} without one.
 */
static bool match (const char *pattern, const char *text, size_t tlen, struct span *cap)
{
    size_t pos = 0;  /* where the last literal ended */
    size_t need = 0; /* characters the `{}` since then take at least */
    bool capturing = false, captured = false;
    const char *p = pattern;

    cap->start = cap->len = 0;
    while (*p) {
        if (*p == '*') {
            p++;
            continue;
        }
        if (p[0] == '{' && p[1] == '}') {
            if (!captured && !capturing) {
                capturing = true;
                cap->start = pos;
            }
            need++;
            p += 2;
            continue;
        }
        size_t len = literal_len (p);
        long at = find (text, tlen, pos + need, p, len);
        if (at < 0)
            return false;
        if (capturing) {
            cap->len = (size_t)at - cap->start;
            capturing = false;
            captured = true;
        }
        pos = (size_t)at + len;
        need = 0;
        p += len;
    }
    if (pos + need > tlen)
        return false;
    if (capturing)
        cap->len = tlen - cap->start;
    return true;
}

/* --- writing ---------------------------------------------------------------- */

/* How many of s's first n bytes to keep so that a cut falls at a UTF-8
 * character start (s[n] must exist).
 */
static size_t utf8_cut (const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* A bounded writer: what does not fit is dropped at a character start. */
struct out {
    char *buf;
    size_t size, len;
    bool full;
};

static void out_add (struct out *o, const char *s, size_t n)
{
    if (o->full)
        return;
    if (o->len + n >= o->size) {
        n = o->size - 1 - o->len;
        o->full = true;
        /* s[n] exists: more than n bytes were asked for */
        n = utf8_cut (s, n);
    }
    memcpy (o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

/* Row r's sentence with the capture `cap` of text in place of its `{}`. */
static void expand (const struct row *r, const char *text, struct span cap, char *buf,
                    size_t size)
{
    struct out o = {buf, size, 0, false};
    const char *hole = strstr (r->sentence, "{}");
    buf[0] = '\0';
    if (!hole) {
        out_add (&o, r->sentence, strlen (r->sentence));
        return;
    }
    out_add (&o, r->sentence, (size_t)(hole - r->sentence));
    if (cap.len > DWS_EXPLAIN_CAPTURE_MAX) {
        out_add (&o, text + cap.start, utf8_cut (text + cap.start, DWS_EXPLAIN_CAPTURE_MAX));
        out_add (&o, "...", 3);
    }
    else
        out_add (&o, text + cap.start, cap.len);
    out_add (&o, hole + 2, strlen (hole + 2));
}

/* The first row matching text, or -1; its capture in *cap. */
static int lookup (const char *text, size_t tlen, struct span *cap)
{
    for (int i = 0; i < NROWS; i++)
        if (match (rows[i].pattern, text, tlen, cap))
            return i;
    return -1;
}

const char *dws_explain (const char *text, char *buf, size_t size)
{
    struct span cap;
    int i;
    if (!text || !buf || size == 0 || (i = lookup (text, strlen (text), &cap)) < 0)
        return NULL;
    expand (&rows[i], text, cap, buf, size);
    return buf;
}

/* Does note already carry one of the table's sentences after the
 * separator?  Each sentence is a pattern too: its `{}` matches whatever
 * capture was put in, and sentences hold no `*`.
 */
static bool explained (const char *note, size_t len)
{
    char pattern[DWS_EXPLAIN_MAX];
    struct span cap;
    size_t sep = strlen (DWS_EXPLAIN_SEPARATOR);
    if (!strstr (note, DWS_EXPLAIN_SEPARATOR))
        return false;
    memcpy (pattern, DWS_EXPLAIN_SEPARATOR, sep);
    for (int i = 0; i < NROWS; i++) {
        size_t n = strlen (rows[i].sentence);
        if (sep + n >= sizeof (pattern))
            continue; /* a test keeps every sentence well below this */
        memcpy (pattern + sep, rows[i].sentence, n + 1);
        if (match (pattern, note, len, &cap))
            return true;
    }
    return false;
}

int dws_explain_note (const char *note, char *buf, size_t size)
{
    char sentence[DWS_EXPLAIN_MAX];
    size_t sep = strlen (DWS_EXPLAIN_SEPARATOR);
    size_t n, s;

    if (!note || !buf || size == 0)
        return -1;
    n = strlen (note);
    if (explained (note, n) || !dws_explain (note, sentence, sizeof (sentence))
        || n + sep + (s = strlen (sentence)) >= size) {
        /* the note alone, cut only when not even it fits (memmove: buf
         * may be the note itself) */
        if (n >= size)
            n = utf8_cut (note, size - 1);
        memmove (buf, note, n);
        buf[n] = '\0';
        return 0;
    }
    memmove (buf, note, n);
    memcpy (buf + n, DWS_EXPLAIN_SEPARATOR, sep);
    memcpy (buf + n + sep, sentence, s + 1);
    return 1;
}

/* --- the table ------------------------------------------------------------ */
const char *dws_explain_event (void)
{
    return DWS_EXPLAIN_EVENT;
}

const char *dws_explain_kvs_key (void)
{
    return DWS_EXPLAIN_KVS_KEY;
}

int dws_explain_is (const char *text, const char *name)
{
    struct span cap;
    int i;
    if (!text || !name || (i = lookup (text, strlen (text), &cap)) < 0)
        return 0;
    return !strcmp (rows[i].name, name);
}

/* At most DWS_EXPLAIN_CAPTURE_MAX bytes of s, cut at a character start. */
static size_t capped (const char *s)
{
    size_t n = strlen (s);
    return n > DWS_EXPLAIN_CAPTURE_MAX ? utf8_cut (s, DWS_EXPLAIN_CAPTURE_MAX) : n;
}

const char *dws_explain_persistent_owner (const char *name, long long uid, const char *user,
                                          char *buf, size_t size)
{
    static const char *const share = ". That user (or the instance owner) can share it"
                                     " with: flux dws persistent share ";
    struct out o = {buf, size, 0, false};
    char num[64];
    if (!name || !buf || size == 0 || uid < 0)
        return NULL;
    buf[0] = '\0';
    out_add (&o, "'", 1);
    out_add (&o, name, capped (name));
    out_add (&o, "' belongs to ", 13);
    if (user && *user) {
        snprintf (num, sizeof (num), " (uid %lld)", uid);
        out_add (&o, user, capped (user));
    }
    else
        snprintf (num, sizeof (num), "the user with uid %lld", uid);
    out_add (&o, num, strlen (num));
    out_add (&o, share, strlen (share));
    out_add (&o, name, capped (name));
    return buf;
}

int dws_explain_count (void)
{
    return NROWS;
}

static const struct row *row_at (int i)
{
    return i >= 0 && i < NROWS ? &rows[i] : NULL;
}

const char *dws_explain_row_name (int i)
{
    return row_at (i) ? rows[i].name : NULL;
}

const char *dws_explain_row_pattern (int i)
{
    return row_at (i) ? rows[i].pattern : NULL;
}

const char *dws_explain_row_sentence (int i)
{
    return row_at (i) ? rows[i].sentence : NULL;
}

const char *dws_explain_row_example (int i)
{
    return row_at (i) ? rows[i].example : NULL;
}

int dws_explain_match (const char *pattern, const char *text, char *cap, size_t capsize)
{
    struct span c;
    if (!pattern || !text)
        return -1;
    if (!match (pattern, text, strlen (text), &c))
        return 0;
    if (cap && capsize > 0) {
        struct out o = {cap, capsize, 0, false};
        cap[0] = '\0';
        out_add (&o, text + c.start, c.len);
    }
    return 1;
}
