# cython: language_level=3, boundscheck=False, wraparound=False
"""ISO 8601 event times in C for the common UTC spellings (`2013-01-01`, `2013-01-01T00:20:46`, with `Z` or `+00:00`):
the parser's cost per event is mostly this conversion. Every other spelling, and every value that is not a valid instant
in one of them, goes to the Python parser (`timefmt`), so results and errors are the same either way."""

from cpython.unicode cimport PyUnicode_1BYTE_KIND, PyUnicode_DATA, PyUnicode_KIND

cdef long long DAY_MS = 86_400_000


cdef inline int _digits(const unsigned char* text, Py_ssize_t start, Py_ssize_t count):
    """The number written by `count` ASCII digits from `start`, or -1."""
    cdef int value = 0
    cdef int code
    cdef Py_ssize_t i
    for i in range(start, start + count):
        code = text[i]
        if code < 48 or code > 57:
            return -1
        value = value * 10 + (code - 48)
    return value


cdef inline long long _days_from_civil(long long y, int m, int d):
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    cdef long long era = (y if y >= 0 else y - 399) // 400
    cdef long long yoe = y - era * 400
    cdef long long doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    cdef long long doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef inline int _month_days(int y, int m):
    if m == 2:
        return 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    return 30 if m in (4, 6, 9, 11) else 31


cdef class IsoTime:
    """Callable: an ISO 8601 time value to epoch milliseconds, `fallback` for what the C path does not read."""

    cdef object fallback

    def __init__(self, fallback):
        self.fallback = fallback

    def __call__(self, value):
        if type(value) is not str or PyUnicode_KIND(value) != PyUnicode_1BYTE_KIND:
            return self.fallback(value)
        cdef Py_ssize_t n = len(<str>value)
        cdef const unsigned char* text = <const unsigned char*>PyUnicode_DATA(value)  # one byte a character: read directly
        if n != 10 and n != 19 and not (n == 20 and text[19] == b"Z") and not (n == 25 and (<str>value).endswith(u"+00:00")):
            return self.fallback(value)
        cdef int y = _digits(text, 0, 4), m = _digits(text, 5, 2), d = _digits(text, 8, 2)
        if y < 1 or m < 1 or m > 12 or d < 1 or text[4] != b"-" or text[7] != b"-" or d > _month_days(y, m):
            return self.fallback(value)
        cdef long long millis = _days_from_civil(y, m, d) * DAY_MS
        if n == 10:
            return millis
        cdef unsigned char sep = text[10]
        cdef int hh = _digits(text, 11, 2), mm = _digits(text, 14, 2), ss = _digits(text, 17, 2)
        if (sep != b"T" and sep != b" ") or text[13] != b":" or text[16] != b":" or hh < 0 or hh > 23 or mm < 0 or mm > 59 or ss < 0 or ss > 59:
            return self.fallback(value)
        return millis + (hh * 3600 + mm * 60 + ss) * 1000
