#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Apply, verify or roll back a redline tune plan on the host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: tune
short_description: Apply, verify or roll back a redline tune plan, behind redline's journal
description:
  - Calls C(redline tune verify PLAN --json), C(redline tune apply PLAN --yes --json) and
    C(redline tune rollback --json) on the host. Every write goes through redline's journal
    (old value fsynced before the write, read back after), so C(state=rolled_back) restores
    exactly what was there, even after a crash.
  - C(state=applied) first verifies the plan; when every change is already in place the task
    reports C(ok), not C(changed), and nothing is written. In check mode it only verifies and
    reports, as a diff, the live value and the planned one of each change that is not in place.
  - C(state=verified) reports, without changing anything, which changes are no longer in
    place (drift); with O(fail_on_drift) the task fails when one is.
  - C(state=rolled_back) restores what the journal in O(state_dir) holds, newest first, and
    returns what it restored; a value someone changed since redline wrote it is left alone and
    reported as drift. In check mode it reports what would be restored.
version_added: 0.1.0
author: redline contributors
options:
  plan:
    description: The plan file on the host (YAML or JSON, as C(redline tune plan -o) writes it). One of O(plan) and O(plan_content) is required unless O(state=rolled_back).
    type: path
  plan_content:
    description:
      - The plan itself, e.g. C("{{ lookup('file', 'plan.yaml') }}"). The module writes it to its own temporary
        directory for the binary and removes it with the task, so check mode leaves nothing on the host.
    type: str
  state:
    description: What to make true.
    type: str
    choices: [applied, verified, rolled_back]
    default: applied
  state_dir:
    description:
      - redline's journal directory on the host (C(--state-dir)); unset, redline's default (C(/var/lib/redline)).
      - A rollback with a O(state_dir) that does not exist fails (redline's guard against a mistyped directory);
        with the default, a host where nothing was ever applied has nothing to roll back.
    type: path
  binary:
    description: The redline binary on the host.
    type: path
    default: /usr/local/bin/redline
  fail_on_drift:
    description: With O(state=verified), fail when a change is not in place.
    type: bool
    default: false
notes:
  - Supports check mode and diff mode.
  - Runs as root (C(become)), as C(redline tune) does.
"""

EXAMPLES = r"""
- name: Apply the plan (ok when it is already in place)
  redline.redis_host.tune:
    plan: /etc/redline/plan.yaml

- name: Has anything drifted?
  redline.redis_host.tune:
    plan: /etc/redline/plan.yaml
    state: verified
  register: verify

- name: Put back what redline changed
  redline.redis_host.tune:
    state: rolled_back
"""

RETURN = r"""
outcomes:
  description: redline's outcome for each change (change, old, new, now, status), as its --json prints them.
  returned: always
  type: list
  elements: dict
drift:
  description: The changes that are not in place (state=verified and state=applied), each with its live value (now) and the planned one.
  returned: when state is verified or applied
  type: list
  elements: dict
restored:
  description: The changes a rollback restored (or, in check mode, would restore).
  returned: when state is rolled_back
  type: list
  elements: dict
session:
  description: The journal session of this apply (C(redline tune rollback --session) takes it).
  returned: when an apply wrote something
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.redline.redis_host.plugins.module_utils.redline import (
    BINARY_DEFAULT,
    change_name,
    diff_of,
    run_json,
)


def plan_path(module):
    """The plan file for the binary: O(plan), or O(plan_content) in the task's temporary directory."""
    if module.params["plan"]:
        return module.params["plan"]
    path = os.path.join(module.tmpdir, "plan.yaml")
    with open(path, "w") as f:
        f.write(module.params["plan_content"])
    module.params["plan"] = path
    return path


def state_dir(module):
    """--state-dir when the task names one; else redline's default."""
    return ["--state-dir", module.params["state_dir"]] if module.params["state_dir"] else []


def verify(module):
    """redline tune verify PLAN --json: the outcomes and those not in place."""
    _, outcomes = run_json(module, ["tune", "verify", plan_path(module), "--json"] + state_dir(module))
    outcomes = outcomes or []
    return outcomes, [o for o in outcomes if o.get("status") != "ok"]


def drift_diff(drift):
    return diff_of([(o["change"], o.get("now", ""), o["change"].get("value", "")) for o in drift])


def applied(module):
    outcomes, drift = verify(module)
    if not drift:
        module.exit_json(changed=False, outcomes=outcomes, drift=[], msg="every change is in place")
    if module.check_mode:
        module.exit_json(changed=True, outcomes=outcomes, drift=drift, diff=drift_diff(drift),
                         msg="%d of %d changes would be applied" % (len(drift), len(outcomes)))
    rc, res = run_json(module, ["tune", "apply", plan_path(module), "--yes", "--json"] + state_dir(module))
    outs = res.get("outcomes") or []
    done = [o for o in outs if o.get("status") == "applied"]
    result = dict(changed=bool(done), outcomes=outs, drift=drift, session=res.get("session", ""),
                  diff=diff_of([(o["change"], o.get("old", ""), o.get("new", "")) for o in done]))
    if rc != 0:
        bad = ["%s: %s %s" % (change_name(o["change"]), o.get("status"), o.get("reason", "")) for o in outs if o.get("status") not in ("applied", "unchanged")]
        module.fail_json(msg="redline tune apply: " + "; ".join(bad), **result)
    module.exit_json(msg="applied %d change(s)" % len(done), **result)


def verified(module):
    outcomes, drift = verify(module)
    msg = "%d of %d changes not in place: %s" % (len(drift), len(outcomes), ", ".join(change_name(o["change"]) for o in drift)) if drift else "every change is in place"
    if drift and module.params["fail_on_drift"]:
        module.fail_json(msg=msg, outcomes=outcomes, drift=drift)
    module.exit_json(changed=False, outcomes=outcomes, drift=drift, msg=msg)


def rolled_back(module):
    args = ["tune", "rollback", "--json"] + state_dir(module)
    if module.check_mode:
        args.append("--dry-run")
    rc, res = run_json(module, args)
    outs = res.get("outcomes") or []
    want = "change" if module.check_mode else "restored"
    restored = [o for o in outs if o.get("status") == want]
    result = dict(changed=bool(restored), outcomes=outs, restored=restored,
                  diff=diff_of([(o["change"], o.get("now", ""), o.get("old", "")) for o in restored]))
    if rc != 0:
        module.fail_json(msg="redline tune rollback: some values could not be restored (they stay journaled: run it again)", **result)
    names = ", ".join(change_name(o["change"]) + " = " + o.get("old", "") for o in restored)
    module.exit_json(msg=("restored " + names) if restored else "nothing to roll back", **result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            plan=dict(type="path"),
            plan_content=dict(type="str"),
            state=dict(type="str", choices=["applied", "verified", "rolled_back"], default="applied"),
            state_dir=dict(type="path"),
            binary=dict(type="path", default=BINARY_DEFAULT),
            fail_on_drift=dict(type="bool", default=False),
        ),
        required_if=[("state", "applied", ["plan", "plan_content"], True), ("state", "verified", ["plan", "plan_content"], True)],
        mutually_exclusive=[("plan", "plan_content")],
        supports_check_mode=True,
    )
    {"applied": applied, "verified": verified, "rolled_back": rolled_back}[module.params["state"]](module)


if __name__ == "__main__":
    main()
