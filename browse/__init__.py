"""Server-rendered pages for people: home, drive list, drive page, compare, submission page, methodology."""
