# -*- coding: utf-8 -*-
# The one escaping of a value written into a systemd unit's ExecStart= by
# this collection's templates: systemd's own quoting (systemd.syntax(7),
# systemd.service(5) "Command lines"), not a shell's. An inventory value
# with a newline could otherwise add a line of its own to the unit
# (ExecStartPost=, run as root); "%" and "$" would be specifiers and
# variable references.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from ansible.errors import AnsibleFilterError
except ImportError:  # rendered outside Ansible, by the collection's tests
    AnsibleFilterError = ValueError

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "%": "%%", "$": "$$"}


def systemd_arg(value):
    """One ExecStart= word: double-quoted, with systemd's escapes."""
    s = str(value)
    for c in s:
        if (ord(c) < 0x20 and c not in "\n\r\t") or ord(c) == 0x7F:
            raise AnsibleFilterError("systemd_arg: a control character in %r" % s)
    return '"' + "".join(_ESCAPES.get(c, c) for c in s) + '"'


class FilterModule(object):
    def filters(self):
        return {"systemd_arg": systemd_arg}
