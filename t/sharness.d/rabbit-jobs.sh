# Rabbit job scenarios the real-stack scripts share (t3600 on the
# emulator's controllers, t3602 on the real ones), and the checks of a
# job's end several scripts use.  Each needs a rabbit instance (FLUX_URI)
# and KUBECONFIG naming the API server its dws service talks to.

# ends_cleanly ID EVENTS: the job ends with its epilog done and no
# exception, its Workflow gone; its eventlog is kept in EVENTS
ends_cleanly() {
    flux job wait-event -t 60 $1 clean &&
    flux job eventlog $1 >$2 &&
    grep "epilog-finish description=\"dws-epilog\" status=0" $2 &&
    test_must_fail grep exception $2 &&
    workflow_gone $1
}

# xfs_through_every_state: a 2-node xfs job from Proposal to Teardown:
# one mount path for both nodes, under /mnt/nnf/, both perilogs done,
# the Workflow's last state in the job's KVS record, the Workflow gone
xfs_through_every_state() {
    flux run -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB name=scratch" \
        printenv DW_JOB_scratch >xfs.out &&
    id=$(flux job last) &&
    test $(sort -u xfs.out | wc -l) = 1 &&
    grep "^/mnt/nnf/" xfs.out &&
    flux job eventlog $id >xfs.events &&
    grep "prolog-finish description=\"dws-setup\" status=0" xfs.events &&
    grep "epilog-finish description=\"dws-epilog\" status=0" xfs.events &&
    flux kvs get $(flux job id --to=kvs $id).rabbit_workflow | grep -q "\"Teardown\"" &&
    workflow_gone $id
}

# gfs2_raw_and_lustre: a job of each sees its storage, its Workflow goes
gfs2_raw_and_lustre() {
    flux run -N1 --setattr=system.dw="#DW jobdw type=gfs2 capacity=20GiB name=shared" \
        printenv DW_JOB_shared >gfs2.out &&
    grep "^/mnt/nnf/" gfs2.out &&
    workflow_gone $(flux job last) &&
    flux run -N1 --setattr=system.dw="#DW jobdw type=raw capacity=5GiB name=rawdisk" \
        printenv DW_JOB_rawdisk >raw.out &&
    test -s raw.out &&
    workflow_gone $(flux job last) &&
    flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=100GiB name=lus" \
        printenv DW_JOB_lus >lustre.out &&
    test -s lustre.out &&
    workflow_gone $(flux job last)
}

# persistent_create_use_destroy: a persistent Lustre file system made by
# one job, used by the next, destroyed by a third
persistent_create_use_destroy() {
    flux run -N1 --setattr=system.dw="#DW create_persistent type=lustre capacity=100GiB name=keep" true &&
    workflow_gone $(flux job last) &&
    kubectl get persistentstorageinstance keep &&
    flux run -N1 --setattr=system.dw="#DW persistentdw name=keep" printenv DW_PERSISTENT_keep >pers.out &&
    test -s pers.out &&
    workflow_gone $(flux job last) &&
    flux run -N1 --setattr=system.dw="#DW destroy_persistent name=keep" true &&
    workflow_gone $(flux job last) &&
    kubectl wait --for=delete persistentstorageinstance/keep --timeout=60s
}

# reload_service_mid_job: the dws service reloaded while a job runs
# (held by submit_held); released, the job ends cleanly with its storage
reload_service_mid_job() {
    id=$(submit_held reload) &&
    test_when_finished "flux cancel $id 2>/dev/null || :" &&
    flux job wait-event -t 30 $id start &&
    flux module remove dws &&
    flux module load "$top_srcdir/src/modules/dws.py" &&
    release_job reload $id &&
    ends_cleanly $id reload.events &&
    flux job attach $id | grep "^DW_JOB_scratch=/mnt/nnf/"
}

# refused_in_dws_words: a directive DWS' validating webhook refuses; the
# job's dws-create exception quotes it
refused_in_dws_words() {
    test_must_fail flux run -N1 --setattr=system.dw="#DW jobdw type=zfs capacity=1GiB name=aa" true &&
    id=$(flux job last) &&
    flux job eventlog $id >bad.events &&
    grep "exception type=\"dws-create\"" bad.events &&
    grep "DWS workflow interactions failed: admission webhook ..vworkflow.kb.io.. denied the request: argument .type. invalid string .zfs.\"" bad.events
}

# proposal_error_in_nnf_words: a copy_in outside any Lustre file system
# fails in Proposal, in nnf-sos' words; the Workflow goes
proposal_error_in_nnf_words() {
    test_must_fail flux run -N1 --setattr=system.dw="[\"#DW jobdw type=xfs capacity=1GiB name=aa\", \"#DW copy_in source=/nowhere/x destination=\$DW_JOB_aa/\"]" true &&
    id=$(flux job last) &&
    flux job eventlog $id >prop.events &&
    grep "global Lustre file system containing .*/nowhere/x.* not found" prop.events &&
    workflow_gone $id
}

# cancel_while_running DW: a job of directive DW cancelled once it runs:
# its epilog tears the storage down, its Workflow goes
cancel_while_running() {
    running=$(flux submit -N1 --setattr=system.dw="$1" sleep inf) &&
    test_when_finished "flux cancel $running 2>/dev/null || :" &&
    flux job wait-event -t 30 $running start &&
    flux cancel $running &&
    flux job wait-event -t 60 $running clean &&
    flux job eventlog $running >running.events &&
    grep "epilog-finish description=\"dws-epilog\" status=0" running.events &&
    workflow_gone $running
}
