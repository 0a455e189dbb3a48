#!/bin/sh
# flux-dws epilog: start nnf-clientmount so the job's rabbit file systems
# can be unmounted (PostRun).  NNF_CLIENTMOUNT_CTL: the command that
# starts it (default: systemctl).
flux getrabbit >/dev/null 2>&1 || exit 0
${NNF_CLIENTMOUNT_CTL:-systemctl} start nnf-clientmount
