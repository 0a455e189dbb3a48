"""Plain sentences for DWS and nnf-sos failures (libdws explain.h) through
cffi: every row explains its own example, the texts the engine, the jobtap
machine, DWS and the emulator really produce land on the right row, and a
note keeps its original text first, byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_dws.dwsim import resource_error as rerr
from flux_dws.dwsim.servers import NOT_MET, NOT_SATISFIED
from flux_dws.errors import DwsError
from flux_dws.libdws import directives
from flux_dws.libdws import explain as ex
from flux_dws.libdws.jobsm import NOTE_PREFIX

ROWS = ex.rows()

DWS = "DWS/Rabbit interactions failed: "
JOBSM = "DWS workflow interactions failed: "
WEBHOOK = JOBSM + 'admission webhook "vworkflow.kb.io" denied the request: '
WF_ERROR = DWS + "workflow hit an error: DW Directive 0: "


def test_the_table_is_not_empty_and_names_are_unique() -> None:
    assert len(ROWS) > 40
    assert len({r.name for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_row_explains_its_own_example(row: ex.Row) -> None:
    assert ex.find_row(row.example) == row
    sentence = ex.explain(row.example)
    assert sentence and sentence.endswith(".")
    assert "{}" not in sentence and ex.SEPARATOR not in sentence
    assert len(row.sentence) <= 200
    captured = ex.match(row.pattern, row.example)
    assert captured is not None
    if "{}" in row.sentence:
        assert captured and sentence == row.sentence.replace("{}", captured)
    else:
        assert sentence == row.sentence


# The texts as the code that raises them words them (engine/verbs/fault.c,
# progress.c, request.c; jobsm.c; DWS through the emulator), and the row
# each must land on.
REAL = [
    # engine timeouts (fault.c)
    ("File system creation took too long", "setup-timeout"),
    ("File system creation took too long: DWS refused forceReady after giving up c3: "
     "forceReady refused", "force-ready-refused"),
    ("timed out waiting for mounts", "mount-timeout"),
    ("timed out waiting for mounts: DWS refused forceReady after giving up c[3-4]: "
     "Unprocessable Entity", "force-ready-refused"),
    (DWS + "workflow in TransientCondition too long in PreRun", "mount-transient"),
    ("unmounts timed out, skipping data movement", "unmount-timeout"),
    ("skipping rabbit data movement", "teardown-after"),
    ("teardown_after expired: skipping rabbit data movement", "teardown-after"),
    (DWS + "workflow in TransientCondition for more than 0.3 s: DW Directive 0: Internal"
     " error: flaky link", "transient"),
    # jobsm.c
    ("DWS epilog timed out", "epilog-timeout"),
    (JOBSM + "dws.create RPC could not be sent. Admins: is the flux-coral2-dws service"
     " loaded?", "service-down"),
    (JOBSM + "received malformed dws.setup RPC", "malformed-rpc"),
    (JOBSM + "dw_failure_tolerance must be a positive integer", "tolerance"),
    # progress.c, request.c
    (DWS + "workflow fluxjob-601 was deleted outside of Flux", "workflow-deleted"),
    (DWS + "workflow fluxjob-703 is being deleted outside of Flux", "workflow-deleted"),
    (DWS + "cannot fill the Computes: etcd is down", "kubernetes"),
    (DWS + "cannot move workflow fluxjob-201 to DataIn: desiredState is bad", "kubernetes"),
    (DWS + "cannot place rabbit storage: the job has no compute nodes attached to rabbits",
     "no-rabbit-nodes"),
    # the webhook (flux_dws.libdws.directives words it as DWS does)
    (WEBHOOK + "argument 'type' invalid string 'zfs'", "directive-type"),
    (WEBHOOK + "invalid directive '#DW foo'", "directive-invalid"),
    (WEBHOOK + "argument 'name' invalid string 'a'", "directive-name"),
    (WEBHOOK + "missing '#DW' prefix in directive 'jobdw type=xfs'", "directive-prefix"),
    (WEBHOOK + "argument 'capacity' specified integer value 9 is greather than maximum"
     " value 8", "directive-argument-value"),
    # DWS / nnf-sos (dwsim and the emulator say them word for word)
    (WF_ERROR + "User error: persistent storage instance 'ps1' not found",
     "persistent-missing"),
    (WF_ERROR + "User error: PersistentStorageInstance 'ps1' not found",
     "persistent-missing-psi"),
    (WF_ERROR + "User error: PersistentStorage 'ps1' not found", "persistent-missing-ps"),
    (WF_ERROR + "User error: User ID does not match existing persistent storage",
     "persistent-not-shared"),
    (WF_ERROR + "User error: user ID does not match existing persistent storage",
     "persistent-not-owner"),
    (WF_ERROR + "User error: Persistent storage instance 'ps1' is deleting",
     "persistent-deleting"),
    (WF_ERROR + "User error: persistentdw directive mentioning 'ps1' not found",
     "persistentdw-missing"),
    (WF_ERROR + "User error: job storage instance 'my-storage' not found",
     "job-storage-missing"),
    (WF_ERROR + "User error: data movement can not be used with raw allocations", "dm-raw"),
    (WF_ERROR + "User error: global Lustre file system containing '/lus/x' not found",
     "dm-lustre-path"),
    (WF_ERROR + "User error: Unable to find NnfStorageProfile: nope", "storage-profile"),
    (WF_ERROR + "User error: Unable to find NnfDataMovementProfile: nope", "dm-profile"),
    (WF_ERROR + "Internal error: Unable to find a default NnfDataMovementProfile to use",
     "dm-profile-default"),
    (DWS + "workflow hit an error: DW Directive 1: Internal error: data movement operation"
     " failed during 'DataIn', message: ", "dm-copy-in"),
    ("DWS/Rabbit interactions failed: workflow hit an error: DW Directive 2: Internal error:"
     " data movement operation failed during 'DataOut', message: EIO", "dm-copy-out"),
    ("internal error: Node: compute-02: mount/unmount failed: unable to mount file system:"
     " mount: /mnt/nnf: no such device", "mount-failed"),
    ("internal error: Node: compute-02: mount/unmount failed: unable to unmount file system:"
     " busy", "unmount-failed"),
    (WF_ERROR + "Internal error: user container(s) failed to run successfully after 7"
     " attempts", "container-run"),
    (WF_ERROR + "Internal error: user container(s) failed to start after 60 seconds",
     "container-start"),
    (WF_ERROR + "User error: container profile 'nope' not found", "container-profile"),
    (WF_ERROR + "Internal error: no valid container profile found",
     "container-profile-invalid"),
    (WF_ERROR + "User error: container profile 'p' is restricted to GroupID 7",
     "container-profile-restricted"),
    (WF_ERROR + "User error: unsupported container filesystem: xfs", "container-filesystem"),
    (WF_ERROR + "WLM error: Allocation request does not meet directive requirements",
     "servers-not-met"),
    (WF_ERROR + "WLM error: storage directive requirements were not satisfied",
     "servers-not-satisfied"),
    (JOBSM + "Requested a total of 300 GiB of xfs storage per node but max is 200 GiB per"
     " node", "capacity-maximum"),
    (JOBSM + "Lustre needs 4096 GiB: 2 whole rabbits of 4096 GiB, more than"
     " rabbit.lustre.max_rabbits (2)", "capacity-lustre"),
    # only DWS' error type is known
    (WF_ERROR + "User error: disk died in Setup", "dws-user"),
    (WF_ERROR + "Internal error: ", "dws-internal"),
]


@pytest.mark.parametrize(("text", "name"), REAL, ids=[n for _, n in REAL])
def test_real_texts_land_on_their_row(text: str, name: str) -> None:
    row = ex.find_row(text)
    assert row is not None and row.name == name, (text, row)
    note, sentence = ex.explain_note(text), ex.explain(text)
    assert sentence is not None and note == text + ex.SEPARATOR + sentence


@pytest.mark.parametrize(("dw", "name"), [
    ("#DW jobdw type=zfs capacity=1GiB name=scratch", "directive-type"),
    ("#DW jobdw type=xfs capacity=10G name=scratch", "directive-capacity"),
    ("#DW jobdw type=xfs capacity=1GiB name=Scratch", "directive-name"),
    ("#DW jobdw type=xfs name=scratch", "directive-argument-missing"),
    ("#DW jobdw type=xfs capacity=1GiB name=scratch colour=red", "directive-argument-unknown"),
    ("#DW jobdw type=xfs type=xfs capacity=1GiB name=scratch", "directive-argument-repeated"),
    ("#DW jobdw type=xfs capacity=1GiB name=scratch requires=copyoffload",
     "directive-argument-value"),
    (["#DW jobdw type=xfs capacity=1GiB name=scratch",
      "#DW jobdw type=xfs capacity=1GiB name=scratch"], "directive-name-unique"),
    ("#DW jobdwx type=xfs", "directive-invalid"),
    ("jobdw type=xfs capacity=1GiB name=scratch", "directive-prefix"),
    (5, "directive-malformed"),
])
def test_the_validators_own_texts(dw: object, name: str) -> None:
    """What flux_dws.libdws.directives (DWS' webhook words) refuses, as the job's
    note carries it."""
    with pytest.raises(directives.DirectiveError) as info:
        directives.check_dw(dw)  # type: ignore[arg-type]
    row = ex.find_row(NOTE_PREFIX + str(info.value))
    assert row is not None and row.name == name, (str(info.value), row)


@pytest.mark.parametrize(("err", "name"), [
    (rerr.user("PersistentStorageInstance 'p' not found"), "persistent-missing-psi"),
    (rerr.user("User ID does not match existing persistent storage"), "persistent-not-shared"),
    (rerr.user("user ID does not match existing persistent storage"), "persistent-not-owner"),
    (rerr.wlm(NOT_MET), "servers-not-met"),
    (rerr.wlm(NOT_SATISFIED), "servers-not-satisfied"),
    (rerr.internal("data movement operation failed during 'DataOut', message: EIO"),
     "dm-copy-out"),
    (rerr.internal(""), "dws-internal"),
])
def test_dws_driver_messages(err: rerr.ResourceError, name: str) -> None:
    """A DWS driver failure as the Workflow's message shows it (spec 1.14),
    inside the note the engine raises."""
    text = f"{DWS}workflow hit an error: DW Directive 0: {err.driver_message}"
    row = ex.find_row(text)
    assert row is not None and row.name == name, (text, row)


def test_a_capture_names_what_the_user_wrote() -> None:
    assert ex.explain(WEBHOOK + "argument 'type' invalid string 'zfs'") == (
        "'zfs' is not a rabbit file system type. Use type=xfs, gfs2, lustre or raw in the #DW"
        " directive.")
    assert "'ps1'" in (ex.explain(WF_ERROR + "User error: PersistentStorage 'ps1' not found")
                       or "")
    assert "0.3 seconds" in (ex.explain(DWS + "workflow in TransientCondition for more than"
                                        " 0.3 s: x") or "")


def test_copy_in_and_copy_out_say_which_step() -> None:
    copy_in = ex.explain("data movement operation failed during 'DataIn', message: x") or ""
    copy_out = ex.explain("data movement operation failed during 'DataOut', message: x") or ""
    assert "copy_in" in copy_in and "did not run" in copy_in
    assert "copy_out" in copy_out and "missing" in copy_out


@pytest.mark.parametrize("text", [
    "",
    "compute-[01-04]",  # the dws-node-failure note: a host list rc1 reads
    DWS + "bad host list: compute[",
    "something nobody has seen before",
    "took too lon",
])
def test_unknown_texts_pass_through(text: str) -> None:
    assert ex.explain(text) is None
    assert ex.find_row(text) is None
    assert ex.explain_note(text) == text


def test_explain_note_is_idempotent() -> None:
    for row in ROWS:
        once = ex.explain_note(row.example)
        assert once != row.example
        assert ex.explain_note(once) == once
        # the jobtap machine's prefix around an explained note
        assert ex.explain_note(JOBSM + once) == JOBSM + once


def test_non_ascii_notes_keep_every_byte() -> None:
    note = WF_ERROR + "User error: PersistentStorage 'caf\u00e9-\U0001f430' not found"
    out = ex.explain_note(note)
    assert out.startswith(note + ex.SEPARATOR)
    assert "'caf\u00e9-\U0001f430'" in out[len(note):]


def test_a_long_capture_is_cut() -> None:
    name = "x" * 1000
    sentence = ex.explain(WF_ERROR + f"User error: PersistentStorage '{name}' not found")
    assert sentence is not None and "x" * 200 + "..." in sentence and "x" * 201 not in sentence


def test_nul_is_refused() -> None:
    with pytest.raises(DwsError, match="NUL"):
        ex.explain_note("a\0b")


def test_match_language() -> None:
    assert ex.match("b{}d", "abcde") == "c"
    assert ex.match("b{}d", "abde") is None
    assert ex.match("b*d", "abde") == ""
    assert ex.match("is: {}", "name is: the rest") == "the rest"
    assert ex.match("DW Directive *: User error: ", WF_ERROR + "User error: x") == ""


@given(st.text(max_size=300))
def test_any_note_comes_back_first(note: str) -> None:
    note = note.replace("\0", "")
    out = ex.explain_note(note)
    assert out.startswith(note)
    assert len(out.encode("utf-8", "surrogatepass")) \
        <= len(note.encode("utf-8", "surrogatepass")) + len(ex.SEPARATOR) + 512
    assert ex.explain_note(out) == out


@given(st.sampled_from(ROWS), st.text(max_size=100), st.text(max_size=100))
def test_examples_inside_other_text_still_explain(row: ex.Row, before: str, after: str) -> None:
    text = (before + row.example + after).replace("\0", "")
    sentence = ex.explain(text)
    # some row (this one, or an earlier one the added text matches)
    assert sentence is not None and sentence.endswith(".")
