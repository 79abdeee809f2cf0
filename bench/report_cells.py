"""How a figure is written in a table cell of docs/benchmarks.md, shared by
report.py and its section modules."""


def num(v, spec):
    """A figure, or n/a where it was not measured."""
    return "n/a" if v is None else spec % v


def ratio(a, b):
    """a over b to two places, or n/a where either is missing or zero."""
    return "%.2f" % (a / b) if a and b else "n/a"
