"""The patterns and key names analysis.privacy finds identifiers by: which JSON keys, labelled lines and paths name a
unit, a machine or a person, and which values are placeholders. analysis.privacy imports them all (its callers and
tests read them there)."""

import re

SCRUBBED = "[scrubbed]"  # what a removed identifier reads as

# JSON keys (compared lowercased, without "_" "-" " ") whose values identify one unit, one machine or one network.
IDENTIFYING_KEYS = frozenset(
    {
        "sn",
        "serial",
        "serialnumber",
        "serialno",
        "subnqn",
        "subsystemnqn",
        "nqn",
        "nguid",
        "fguid",
        "eui64",
        "wwn",
        "wwid",
        "uuid",
        "hostname",
        "nodename",
        "hostnqn",
        "hostid",
        "host",
        "ip",
        "ipaddress",
        "ipv4",
        "ipv6",
        "mac",
        "macaddress",
        "hwaddr",
        "user",
        "username",
        "login",
        "logname",
        "sudouser",
        "machineid",
        "bootid",
        "productserial",
        "boardserial",
        "chassisserial",
        "assettag",
        "chassisassettag",
        "productuuid",
        "signature",
    }
)
# Values that name nothing in particular (vendor placeholders, lshw -sanitize output): never used as needles.
PLACEHOLDERS = frozenset(
    v.lower()
    for v in (
        SCRUBBED,
        "[REMOVED]",
        "computer",
        "localhost",
        "localhost.localdomain",
        "To Be Filled By O.E.M.",
        "Default string",
        "System Serial Number",
        "Not Specified",
        "None",
        "N/A",
        "Unknown",
        "0123456789",
        "true",
        "false",
        "root",
    )
)

BY_ID_PATH = re.compile(r"(/dev/disk/by-(?:id|uuid|partuuid|path|label|partlabel|diskseq)/)([^\s\"',;:]+)")
# NVMe qualified names: "nqn.2014.08.org.nvmexpress:<vid><ssvid><serial> <model>" or "...:uuid:<uuid>"
NQN = re.compile(r"(nqn\.\d{4}[.-]\d{2}\.[A-Za-z0-9.-]+:)([^\s\"',;]+)")
HOME_PATH = re.compile(r"(/(?:home|Users)/)([^/\s\"',;:]+)")
# Text lines "<label> <separator> <value>" where the label names a serial number or a host.
_LABELLED_LINE = (
    # the lookahead on the labels' first letters lets the engine leave a line (fio's `"key" : value`) at once
    r"([ \t]*+(?=[abcehilmnpst])"
    r"(?:Serial Number|Serial No\.?|serial|sn|subnqn|hostnqn|(?:static |transient |pretty )?hostname"
    r"|nodename|machine[ _-]?id|boot[ _-]?id|LU WWN Device Id|(?:IEEE )?EUI-?64|NGUID|asset[ _-]?tag"
    r"|(?:product|board|chassis)[ _-]?serial|logname|sudo_user)[ \t]*[:=][ \t]*)(\S.*)$"
)
KERNEL_NAMES = ("Linux", "FreeBSD", "Darwin")  # every kernel name _UNAME_LINE accepts holds one of these
_UNAME_LINE = r"((?:Linux|GNU/Linux|FreeBSD|Darwin)[ \t]+)(?!version\b)([A-Za-z0-9][A-Za-z0-9.-]*)(?=[ \t]+\d)"
TEXT_PATTERNS = (
    re.compile(r"(Device Serial Number\s+)(\S.*)"),  # lspci -vvv capability
    re.compile(r"(\[SN\] Serial number:\s*)(\S.*)", re.IGNORECASE),  # lspci VPD
    re.compile("^" + _LABELLED_LINE, re.IGNORECASE | re.MULTILINE),
    # `uname -a`: the host name follows the kernel's name
    re.compile("^" + _UNAME_LINE, re.MULTILINE),
)
LINE_PATTERNS = (TEXT_PATTERNS[2], TEXT_PATTERNS[3])  # anchored at a line's start
INLINE_PATTERNS = (TEXT_PATTERNS[0], TEXT_PATTERNS[1])  # anywhere in a line (inside a JSON string too)
# The two line patterns from the newline before each line: a literal first character lets the engine jump from line
# to line instead of trying `^` at every character (text_pattern_matches)
LINE_PATTERNS_AFTER_NEWLINE = {
    TEXT_PATTERNS[2]: re.compile("\n" + _LABELLED_LINE, re.IGNORECASE | re.MULTILINE),
    TEXT_PATTERNS[3]: re.compile("\n" + _UNAME_LINE, re.MULTILINE),
}
# "key": value pairs whose key is identifying ("Serial_Number", "serial-number" and "SerialNumber" alike), found in
# the text whether or not it is one JSON document
_KEY = (
    "(?i:" + "|".join("[_ -]?".join(map(re.escape, k)) for k in sorted(IDENTIFYING_KEYS, key=len, reverse=True)) + ")"
)
# the lookahead on the key's first letter lets the engine skip most quotes without trying every key
_KEY = (
    "(?=[" + "".join(sorted({k[0] for k in IDENTIFYING_KEYS} | {k[0].upper() for k in IDENTIFYING_KEYS})) + "])" + _KEY
)
JSON_STRING_PAIR = re.compile(r'("' + _KEY + r'"\s*:\s*)"((?:[^"\\\n]|\\.){0,512})"')
JSON_NUMBER_PAIR = re.compile(r'("' + _KEY + r'"\s*:\s*)(\d{4,40})(?![\d.eE])')
JSON_PAIR_START = re.compile(r'"' + _KEY + r'"\s*:\s*')  # where either pair can start (json_pair_matches)
