"""A job-info service for one broker rank whose eventlog watches go stale.

Test-only.  Loaded in place of a non-leader rank's job-info module
(``flux module remove job-info`` on that rank, then ``flux module load
--name=job-info stale_job_info.py MODE``), it forwards every job-info
request to rank 0's job-info and relays the answers, so the job shells of
that rank start as usual, except for job eventlog watches, which behave as
a rank whose KVS copy stopped one commit behind (flux-core #5657):

  stall  relay a job eventlog's entries up to, not including, the first
         ``dws_environment`` event, then nothing more (the watch never
         wakes again, as seen in CI)
  error  refuse every job eventlog watch at once (EIO)

Cancels and disconnects are passed on to rank 0 for the watches they end.
"""

import errno
import json

from _flux._core import ffi, lib
from flux.brokermod import BrokerModule, request_handler
from flux.constants import FLUX_RPC_NORESPONSE, FLUX_RPC_STREAMING

MODES = ("stall", "error")


class StaleJobInfo(BrokerModule):
    def __init__(self, h, *args):
        super().__init__(h, *args)
        if len(args) != 1 or args[0] not in MODES:
            raise ValueError(f"stale_job_info: give one mode of {MODES}, not {args}")
        self.mode = args[0]
        # forwarded streams: (request message, rank 0 future, cancel topic, stalled?)
        self.streams = []

    def respond_error(self, msg, errnum, text):
        self.handle.flux_respond_error(msg.handle, errnum,
                                       text.encode() if text else ffi.NULL)

    def relay(self, msg, f, stalled_at=None):
        """Answer msg with each of f's responses (a stream until its error)."""
        state = {"stalled": False}

        def cb(fut):
            try:
                payload = fut.get_str()
            except OSError as exc:
                self.respond_error(msg, exc.errno or errno.EIO, exc.strerror)
                self.forget(fut)
                return
            fut.reset()
            if stalled_at and not state["stalled"]:
                name = json.loads(json.loads(payload)["event"]).get("name")
                state["stalled"] = name == stalled_at
            if not state["stalled"]:
                self.handle.respond(msg, payload)

        f.then(cb)

    def forget(self, fut):
        self.streams = [s for s in self.streams if s[1] is not fut]

    def forward(self, msg, streaming=False, stalled_at=None):
        topic = msg.topic
        flags = FLUX_RPC_STREAMING if streaming else 0
        f = self.handle.rpc(topic, msg.payload_str, nodeid=0, flags=flags)
        if streaming:
            self.streams.append((msg, f, topic + "-cancel"))
        self.relay(msg, f, stalled_at)

    def end(self, match, msg):
        """Cancel on rank 0 each forwarded stream msg ends (match: cancel or disconnect)."""
        for orig, f, cancel_topic in list(self.streams):
            if match(msg.handle, orig.handle):
                mt = lib.flux_rpc_get_matchtag(f.handle)
                self.handle.rpc(cancel_topic, {"matchtag": mt}, nodeid=0,
                                flags=FLUX_RPC_NORESPONSE)

    @request_handler("lookup", allow_guest=True)
    def lookup(self, msg):
        self.forward(msg)

    @request_handler("update-lookup", allow_guest=True)
    def update_lookup(self, msg):
        self.forward(msg)

    @request_handler("update-watch", allow_guest=True)
    def update_watch(self, msg):
        self.forward(msg, streaming=True)

    @request_handler("eventlog-watch", allow_guest=True)
    def eventlog_watch(self, msg):
        if json.loads(msg.payload_str).get("path") != "eventlog":
            self.forward(msg, streaming=True)
        elif self.mode == "error":
            self.respond_error(msg, errno.EIO, "stale_job_info: no eventlog on this rank")
        else:
            self.forward(msg, streaming=True, stalled_at="dws_environment")

    @request_handler("eventlog-watch-cancel", allow_guest=True)
    def eventlog_watch_cancel(self, msg):
        self.end(lib.flux_cancel_match, msg)

    @request_handler("update-watch-cancel", allow_guest=True)
    def update_watch_cancel(self, msg):
        self.end(lib.flux_cancel_match, msg)

    @request_handler("disconnect", allow_guest=True)
    def disconnect(self, msg):
        self.end(lib.flux_disconnect_match, msg)
