# cython: language_level=3, boundscheck=False, wraparound=False
"""Kafka's partition of a batch of keys in C: murmur2 of each key's UTF-8 bytes, made positive, modulo the partition
count (what the Java client's default partitioner and librdkafka's `murmur2_random` do). `placement.py` falls back to
the same function in Python where this is not compiled."""

from libc.stdint cimport uint32_t


cdef inline uint32_t _murmur2(const unsigned char* data, Py_ssize_t length):
    cdef uint32_t m = 0x5BD1E995
    cdef uint32_t h = 0x9747B28C ^ <uint32_t>length
    cdef uint32_t k
    cdef Py_ssize_t i = 0
    cdef Py_ssize_t end = length & ~3
    while i < end:
        k = data[i] | (<uint32_t>data[i + 1] << 8) | (<uint32_t>data[i + 2] << 16) | (<uint32_t>data[i + 3] << 24)
        k *= m
        k ^= k >> 24
        k *= m
        h = (h * m) ^ k
        i += 4
    cdef Py_ssize_t extra = length & 3
    if extra == 3:
        h ^= <uint32_t>data[end + 2] << 16
    if extra >= 2:
        h ^= <uint32_t>data[end + 1] << 8
    if extra >= 1:
        h ^= data[end]
        h *= m
    h ^= h >> 13
    h *= m
    h ^= h >> 15
    return h


def murmur2_partitions(list keys, int partitions):
    """The partition of each key (a str) on a topic of `partitions` partitions."""
    cdef list out = []
    cdef bytes data
    for key in keys:
        data = (<str>key).encode()
        out.append((_murmur2(data, len(data)) & 0x7FFFFFFF) % partitions)
    return out
