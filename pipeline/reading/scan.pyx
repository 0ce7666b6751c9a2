# cython: language_level=3, boundscheck=False, wraparound=False
"""A byte scan of a block of JSON lines for what a skipping decoder lets through and the record parser refuses: a
number too large for a double (an exponent of three or more digits, or three hundred digits in a row) and bytes that
are not ASCII (checked as UTF-8 by the caller). A false alarm only sends the block down the record-by-record path."""

from libc.stdint cimport uint8_t

PLAIN = 0
"""ASCII only, no number that could overflow a double."""
NOT_ASCII = 1
"""No such number, but bytes that are not ASCII: the caller checks they are UTF-8."""
HUGE_NUMBER = 2
"""A number (or text like one) that could overflow a double."""


cdef uint8_t[256] CLASS  # per byte: 1 a digit, 2 an exponent's letter (e or E)
for _byte in range(256):
    CLASS[_byte] = 1 if 48 <= _byte <= 57 else 2 if _byte in (69, 101) else 0


cdef inline bint _digit(const uint8_t* text, Py_ssize_t position, Py_ssize_t length):
    return position < length and CLASS[text[position]] == 1


def scan(const uint8_t[::1] view) -> int:
    """PLAIN, NOT_ASCII or HUGE_NUMBER for these bytes."""
    cdef const uint8_t* text = &view[0] if view.shape[0] else NULL
    cdef Py_ssize_t position, length = view.shape[0], digits = 0, ahead
    cdef uint8_t kind, high = 0
    for position in range(length):
        kind = CLASS[text[position]]
        high |= text[position]
        digits = (digits + 1) & -(<Py_ssize_t>(kind & 1))  # the digits in a row so far, without a branch per byte
        if kind & 2:  # an exponent of three digits or more, not negative, may overflow
            ahead = position + 1 + (position + 1 < length and text[position + 1] == 43)
            if _digit(text, ahead, length) and _digit(text, ahead + 1, length) and _digit(text, ahead + 2, length):
                return HUGE_NUMBER
        elif digits >= 300:
            return HUGE_NUMBER
    return NOT_ASCII if high & 0x80 else PLAIN
