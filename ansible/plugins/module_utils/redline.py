# -*- coding: utf-8 -*-
"""What the collection's modules share: running the redline binary and
reading its JSON. Every decision (what is in place, what to restore, what a
finding means) is the binary's; these helpers only carry its answers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

BINARY_DEFAULT = "/usr/local/bin/redline"


def run_json(module, args, ok_rcs=(0, 1)):
    """Run the binary with args and decode its standard output as JSON.

    Returns (rc, document). An exit status outside ok_rcs, or output that
    is not JSON, fails the task with the binary's own one-line message."""
    cmd = [module.params["binary"]] + list(args)
    rc, out, err = module.run_command(cmd)
    message = (err or "").strip() or (out or "").strip()
    if rc not in ok_rcs:
        module.fail_json(msg=message or "redline exited %d" % rc, rc=rc, cmd=cmd)
    try:
        return rc, json.loads(out)
    except ValueError:
        module.fail_json(msg="redline printed no JSON: %s" % (message or "(nothing)"), rc=rc, cmd=cmd)


def change_name(change):
    """One change as people read it: kind, target and, for a cluster, the node."""
    name = "%s %s" % (change.get("kind", "?"), change.get("target", "?"))
    if change.get("node"):
        name += " on " + change["node"]
    return name


def diff_of(pairs):
    """Ansible's diff from (change, before, after) triples."""
    before = "".join("%s = %s\n" % (change_name(c), b) for c, b, _ in pairs)
    after = "".join("%s = %s\n" % (change_name(c), a) for c, _, a in pairs)
    return {"before": before, "after": after}
