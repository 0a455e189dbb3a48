"""KubeSettings from a config table: known keys taken, bad values refused."""

from __future__ import annotations

import pytest

from flux_dws.k8s.settings import KubeSettings


def test_settings():
    s = KubeSettings.from_config({"writers": 2, "retry_deadline": 1.5, "other": "x",
                                  "dws_api_version": "v1alpha6"})
    assert (s.writers, s.retry_deadline, s.dws_api_version, s.retry_attempts) == \
        (2, 1.5, "v1alpha6", 40)
    for bad in ({"writers": 0}, {"writers": 1.5}, {"retry_max": "1"}, {"watch_timeout": True},
                {"dws_api_version": 7}):
        with pytest.raises(ValueError):
            KubeSettings.from_config(bad)
    assert KubeSettings.from_config(None) == KubeSettings()
