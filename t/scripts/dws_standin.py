"""A dws service that serves what flux-coral2's plugin tests serve: nothing but
dws.create, dws.setup and dws.post_run.

Test-only.  Run as a Flux job by the instance owner, as flux-coral2's own
jobtap tests run theirs (``flux submit flux python dws_standin.py LOG``), it
registers the ``dws`` service and answers those three methods; any other
``dws.*`` request (dws.ready, dws.teardown, dws.abort) gets the ENOSYS a
service gives for a method it lacks.  It writes ``registered`` to LOG once the
service is registered, then one JSON line per request it takes
(``{"topic": ..., "payload": ...}``), so a test can wait for it and read what
the plugin sent.

What it does with a job is chosen by words in the job's ``#DW`` text:

  create-fail   dws.create answered ``{"success": false, "errstr": ...}``
  update-error  the resource-update carries ``errmsg`` instead of resources
  exclude       the resource-update carries an ``exclude`` constraint
  update-hold   dws.create answered, no resource-update (the test sends it)
  setup-fail    dws.setup answered ``{"success": false, "errstr": ...}``
  setup-hold    dws.setup answered, no prolog-remove (the test raises or sends it)
  postrun-fail  dws.post_run answered ``{"success": false, "errstr": ...}``
  epilog-hold   dws.post_run answered, no epilog-remove

Otherwise each request is answered ``{"success": true}`` and the job manager
is told to go on: ``job-manager.dws.resource-update`` with the job's resources
unchanged, ``prolog-remove`` with two variables, ``epilog-remove``.
"""

import json
import sys
from typing import Any

import flux
from flux.constants import FLUX_MSGTYPE_REQUEST

EXCLUDE = {"not": [{"properties": ["badrabbit"]}]}
VARIABLES = {"DW_JOB_standin": "/mnt/standin", "DW_WORKFLOW_NAME": "standin"}


class StandIn:
    def __init__(self, h: Any, log: str) -> None:
        self.h = h
        self.log = open(log, "a", buffering=1)  # line-buffered, for the job's life
        self.words: dict[int, str] = {}  # job id -> its #DW text

    def record(self, topic: str, payload: Any) -> None:
        self.log.write(json.dumps({"topic": topic, "payload": payload}) + "\n")

    def has(self, jobid: int, word: str) -> bool:
        return word in self.words.get(jobid, "").split()

    def tell(self, topic: str, payload: dict[str, Any]) -> None:
        """An RPC to the job manager; a failure is written to the log."""

        def done(f: Any) -> None:
            try:
                f.get()
            except OSError as exc:
                self.record(topic + " failed", {"errno": exc.errno, "text": exc.strerror})

        self.h.rpc(topic, payload).then(done)

    def create(self, h: Any, t: int, msg: Any, arg: Any) -> None:
        p = msg.payload
        self.record(msg.topic, p)
        dw = p.get("dw_directives")
        jobid = int(p["jobid"])
        self.words[jobid] = " ".join(dw) if isinstance(dw, list) else str(dw)
        if self.has(jobid, "create-fail"):
            h.respond(msg, {"success": False, "errstr": "stand-in: create refused"})
            return
        h.respond(msg, {"success": True})
        if self.has(jobid, "update-hold"):
            return
        if self.has(jobid, "update-error"):
            self.tell("job-manager.dws.resource-update",
                      {"id": jobid, "resources": p["resources"], "exclude": None,
                       "errmsg": "stand-in: the workflow failed"})
            return
        self.tell("job-manager.dws.resource-update",
                  {"id": jobid, "resources": p["resources"],
                   "exclude": EXCLUDE if self.has(jobid, "exclude") else None})

    def setup(self, h: Any, t: int, msg: Any, arg: Any) -> None:
        p = msg.payload
        self.record(msg.topic, p)
        jobid = int(p["jobid"])
        if self.has(jobid, "setup-fail"):
            h.respond(msg, {"success": False, "errstr": "stand-in: setup refused"})
            return
        h.respond(msg, {"success": True})
        if not self.has(jobid, "setup-hold"):
            self.tell("job-manager.dws.prolog-remove", {"id": jobid, "variables": VARIABLES})

    def post_run(self, h: Any, t: int, msg: Any, arg: Any) -> None:
        p = msg.payload
        self.record(msg.topic, p)
        jobid = int(p["jobid"])
        if self.has(jobid, "postrun-fail"):
            h.respond(msg, {"success": False, "errstr": "stand-in: post_run refused"})
            return
        h.respond(msg, {"success": True})
        if not self.has(jobid, "epilog-hold"):
            self.tell("job-manager.dws.epilog-remove", {"id": jobid})


def main() -> None:
    h = flux.Flux()
    standin = StandIn(h, sys.argv[1])
    watchers = [h.msg_watcher_create(cb, FLUX_MSGTYPE_REQUEST, topic)
                for topic, cb in (("dws.create", standin.create), ("dws.setup", standin.setup),
                                  ("dws.post_run", standin.post_run))]
    for w in watchers:
        w.start()
    h.service_register("dws").get()
    standin.log.write("registered\n")
    h.reactor_run()


if __name__ == "__main__":
    main()
