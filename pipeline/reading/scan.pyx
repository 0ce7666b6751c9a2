# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A byte scan of a block of JSON lines for what a skipping decoder lets through and the record parser refuses: a
number too large for a double (an exponent of three or more digits, not negative, or three hundred digits in a row,
runs from 288 digits counting too)
and bytes that are not ASCII (checked as UTF-8 by the caller). A false alarm only sends the block down the
record-by-record path.

It reads eight bytes at a time (bit tricks on 64-bit words, no branch per byte): a block's letters e and E are found at
once, and only those followed by a digit or a plus sign are looked at closer."""

from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy

PLAIN = 0
"""ASCII only, no number that could overflow a double."""
NOT_ASCII = 1
"""No such number, but bytes that are not ASCII: the caller checks they are UTF-8."""
HUGE_NUMBER = 2
"""A number (or text like one) that could overflow a double."""

cdef uint64_t ONES = 0x0101010101010101ULL
cdef uint64_t HIGHS = 0x8080808080808080ULL
cdef Py_ssize_t RUN_WORDS = 36  # whole words of digits in a row: every run of 300 digits holds them, runs from 288 may


cdef inline uint64_t _equal(uint64_t word, uint8_t byte):
    """The high bit of each byte of `word` that equals `byte` (exact where no byte has its high bit set)."""
    cdef uint64_t diff = word ^ (ONES * byte)
    return (diff - ONES) & ~diff & HIGHS


cdef inline uint64_t _digits(uint64_t word):
    """The high bit of each byte of `word` that is an ASCII digit (exact for ASCII bytes)."""
    cdef uint64_t below = (word + ONES * (0x80 - 0x30)) & HIGHS  # byte >= '0'
    cdef uint64_t above = (word + ONES * (0x80 - 0x3A)) & HIGHS  # byte >= ':'
    return below & ~above


cdef inline bint _digit(const uint8_t* text, Py_ssize_t position, Py_ssize_t length):
    return position < length and 48 <= text[position] <= 57


cdef bint _huge_exponent(const uint8_t* text, Py_ssize_t position, Py_ssize_t length):
    """Whether the e or E at `position` starts an exponent of three digits or more that is not negative."""
    cdef Py_ssize_t ahead = position + 1 + (position + 1 < length and text[position + 1] == 43)
    return _digit(text, ahead, length) and _digit(text, ahead + 1, length) and _digit(text, ahead + 2, length)


cdef bint _huge_tail(const uint8_t* text, Py_ssize_t start, Py_ssize_t length, uint8_t* high):
    """The bytes past the last whole word, one by one."""
    cdef Py_ssize_t position
    for position in range(start, length):
        high[0] |= text[position]
        if (text[position] | 0x20) == 101 and _huge_exponent(text, position, length):
            return True
    return False


def scan(const uint8_t[::1] view) -> int:
    """PLAIN, NOT_ASCII or HUGE_NUMBER for these bytes."""
    cdef Py_ssize_t length = view.shape[0], words = length // 8, index, run = 0, bit
    cdef const uint8_t* text = &view[0] if length else NULL
    cdef uint64_t word, letters, high = 0
    cdef uint8_t tail_high = 0
    for index in range(words):
        memcpy(&word, text + 8 * index, 8)
        high |= word
        letters = _equal(word | (ONES * 0x20), 101)  # e or E (a byte with its high bit set may show: checked closer)
        while letters:
            bit = __builtin_ctzll(letters) >> 3  # the lowest such byte (little-endian: the first in the text)
            if _huge_exponent(text, 8 * index + bit, length):
                return HUGE_NUMBER
            letters &= letters - 1
        run = run + 1 if _digits(word) == HIGHS and not (word & HIGHS) else 0
        if run >= RUN_WORDS:
            return HUGE_NUMBER
    if _huge_tail(text, 8 * words, length, &tail_high):
        return HUGE_NUMBER
    return NOT_ASCII if (high & HIGHS) or (tail_high & 0x80) else PLAIN


cdef extern from *:
    int __builtin_ctzll(unsigned long long value) nogil
