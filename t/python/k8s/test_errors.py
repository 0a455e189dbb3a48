"""Reading an error answer: the wait a 429 asks for, the Status message."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from flux_dws.k8s.errors import retry_after, status_message


def test_retry_after_parsing():
    e = ApiException(status=429)
    e.headers = {"Retry-After": "2"}
    assert retry_after(e) == 2.0
    e.headers = {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert retry_after(e) == 0.0
    e.headers = {"Retry-After": "soon"}
    assert retry_after(e) is None
    e.headers = None
    assert retry_after(e) is None
    e.body = '{"kind":"Status","message":"m"}'
    assert status_message(e) == "m"
    e.body, e.reason = "not json", "Too Many Requests"
    assert status_message(e) == "Too Many Requests"
