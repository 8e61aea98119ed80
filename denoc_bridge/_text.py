"""Small helpers for the text the package prints."""

import difflib


def count(n: int, noun: str) -> str:
    """``"1 case"``, ``"3 cases"``: n and the noun, plural unless n is 1."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def close_matches(word: str, choices, n: int = 3) -> list[str]:
    """The choices a mistyped ``word`` most likely meant (case-insensitive): those that contain
    it or that it contains, then the closest spellings (``difflib``, ratio >= 0.6); at most ``n``."""
    low = str(word).lower()
    if not low:
        return []
    by_low = {c.lower(): c for c in choices}
    found = [c for c in choices if low in c.lower() or c.lower() in low]
    found.sort(key=lambda c: (abs(len(c) - len(low)), c))
    found += [by_low[c] for c in difflib.get_close_matches(low, list(by_low), n=n, cutoff=0.6)]
    return list(dict.fromkeys(found))[:n]


def did_you_mean(word: str, choices, n: int = 3) -> str:
    """``"; did you mean talos?"`` (or ``"..., talos or talos_arm?"``), or "" if nothing is close."""
    close = close_matches(word, choices, n)
    if not close:
        return ""
    text = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f"; did you mean {text}?"
