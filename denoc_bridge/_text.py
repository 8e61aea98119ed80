"""Small helpers for the text the package prints."""


def count(n: int, noun: str) -> str:
    """``"1 case"``, ``"3 cases"``: n and the noun, plural unless n is 1."""
    return f"{n} {noun}" + ("" if n == 1 else "s")
