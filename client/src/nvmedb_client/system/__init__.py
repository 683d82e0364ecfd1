"""What the client learns about the machine and the drive: one subprocess boundary (`commands`), parsers for each
tool's output (`nvme`, `lspci`, `lshw`), host facts from /proc and /sys (`host`), and `collect` tying them together."""
