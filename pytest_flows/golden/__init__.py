"""Holds the deprecated alias :mod:`pytest_flows.golden.migrations` (the golden
files' helpers are public from :mod:`pytest_flows`); importing this package alone
neither warns nor loads anything."""
