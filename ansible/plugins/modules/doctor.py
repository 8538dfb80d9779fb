#!/usr/bin/python
# -*- coding: utf-8 -*-
"""Gather redline doctor's findings on the host as facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: doctor
short_description: Gather redline doctor's findings as facts
description:
  - Runs C(redline doctor --json) on the host and sets the fact C(redline_doctor) (summary,
    target and the findings that fired, with their evidence and fix) and returns the whole
    report as C(report), for a fleet report on the controller (C(redline report --fleet)).
  - Doctor never changes anything, so the task is never C(changed) and runs in check mode too.
  - A finding that fires is not a task failure (doctor's exit status 1); a report doctor
    could not complete (exit status 2 with a report) is returned with a warning; doctor not
    running at all fails the task.
version_added: 0.1.0
author: redline contributors
options:
  args:
    description: Extra arguments for C(redline doctor), e.g. C([--no-redis]) or C([-p, "6380", --pass-file, /etc/redis/pass]). Never put a password itself here.
    type: list
    elements: str
    default: []
  binary:
    description: The redline binary on the host.
    type: path
    default: /usr/local/bin/redline
notes:
  - Supports check mode.
"""

EXAMPLES = r"""
- name: What is wrong with this Redis host?
  redline.redis_host.doctor:
    args: [--no-redis]
- name: Say it
  ansible.builtin.debug:
    msg: "{{ redline_doctor.fired | map(attribute='id') | list }}"
"""

RETURN = r"""
report:
  description: The report as C(redline doctor --json) prints it (schema 1).
  returned: always
  type: dict
ansible_facts:
  description: C(redline_doctor) with C(summary), C(target) and C(fired) (the findings that fired).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.redline.redis_host.plugins.module_utils.redline import BINARY_DEFAULT, run_json


def main():
    module = AnsibleModule(
        argument_spec=dict(
            args=dict(type="list", elements="str", default=[]),
            binary=dict(type="path", default=BINARY_DEFAULT),
        ),
        supports_check_mode=True,
    )
    rc, report = run_json(module, ["doctor", "--json"] + module.params["args"], ok_rcs=(0, 1, 2))
    warnings = []
    if rc == 2:
        warnings.append("redline doctor: the report is incomplete (summary.errors, read_errors)")
    fired = [f for f in report.get("findings") or [] if f.get("status") == "fired"]
    facts = {"summary": report.get("summary", {}), "target": report.get("target", {}), "fired": fired}
    module.exit_json(changed=False, report=report, ansible_facts={"redline_doctor": facts}, warnings=warnings)


if __name__ == "__main__":
    main()
