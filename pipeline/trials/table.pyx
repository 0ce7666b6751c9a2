# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Open trials of one bucket in native memory: for layouts whose trials are counted by profile and close a fixed time
after opening, the common case of a monitor (compiled at install; the bucket keeps trials in a dict without it).

A trial is one 64-byte entry (key hash, key bytes, open time, profile number) in an array aligned to cache lines,
found through an open-addressing index whose slots carry half of the key's hash, so that a probe reads another key's
entry only when the two hashes agree that far; its close is scheduled in a ring of entry numbers in open order. Nothing
of it is a Python object, so hundreds of thousands of open trials neither scatter small objects over the allocator's
pools (which slows every allocation of the process) nor give the garbage collector anything to look at, and closing a
due trial reads its entry directly instead of probing a dict by a key string.

Folding an event looks up the profile the layout's opener or observer remembered for its input here, calling the fold
only for inputs not seen yet, and fetches the index slot and entry of a later event into the cache meanwhile: the
table is far larger than the cache, and its misses were most of a fold's time.
"""

from cpython.object cimport PyObject_Hash
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy

cdef extern from *:
    void __builtin_prefetch(const void* address) nogil

cdef extern from "<stdlib.h>":
    void* aligned_alloc(size_t alignment, size_t size) nogil

import heapq

from fairstream.trials.folds import PROFILE_BITS, PROFILE_LIMIT, PROFILE_MASK

cdef int64_t BITS = PROFILE_BITS, MASK = PROFILE_MASK, LIMIT = PROFILE_LIMIT

cdef enum:
    EMPTY = -1
    DELETED = -2
    INLINE = 24
    BOXED = -1
    ENDED = -3  # a profile: the trial ended before an event of its key came; its entry waits in the schedule to be freed
    ARRAY_WINDOWS = 4  # an observer reading no field, with at most this many windows, remembers by profile in an array
    LINE = 64  # bytes in a cache line: the size of an entry
    AHEAD = 16  # events ahead whose index slot the fold fetches into cache, and at half that, their entry


cdef inline int64_t _ceil_to(int64_t instant, int64_t step):
    """The smallest multiple of `step` that is at least `instant` (`fairstream.records.timefmt.ceil_to` in C, whose division truncates)."""
    cdef int64_t quotient = instant / step
    if quotient * step < instant:
        quotient += 1
    return quotient * step


cdef Py_ssize_t _add_counts(dict group, int32_t* counts, int32_t* order, Py_ssize_t touched, list table) except -1:
    """Add the counts of the `touched` profiles in `order` to `group` (by their slot tuples) and zero them; return 0."""
    cdef Py_ssize_t position
    cdef int32_t profile
    for position in range(touched):
        profile = order[position]
        slots = table[profile]
        group[slots] = group[slots] + counts[profile]
        counts[profile] = 0
    return 0


cdef class _KindFold:
    """How events of one kind meet an open trial: the layout's opener and observer, with their memos (`FoldMemo`) looked
    up here, so that an input seen before changes a trial's profile number without a call into the fold."""

    cdef object opener, observer, open_memo, observe_memo, open_read, observe_read
    cdef tuple windows
    cdef dict open_profiles, observe_profiles
    cdef int nwindows
    cdef int64_t within[ARRAY_WINDOWS]
    cdef int16_t* after  # observers reading no field: the profile after, by `profile << nwindows | windows holding`; -1 unknown

    def __cinit__(self, opener, open_memo, observer, observe_memo, open_read=None, observe_read=None):
        """`open_read` and `observe_read`, where given, read a memo's input from what the fold is handed instead of the
        memo's own `read` (from a decoded struct, not a dict of fields)."""
        cdef Py_ssize_t position
        self.opener, self.observer, self.open_memo, self.observe_memo = opener, observer, open_memo, observe_memo
        if open_memo is not None:
            self.open_read, self.open_profiles = open_read or open_memo.read, open_memo.profiles
        if observe_memo is not None:
            self.observe_read, self.observe_profiles, self.windows = observe_read or observe_memo.read, observe_memo.profiles, observe_memo.windows
            self.nwindows = len(self.windows)
            if not observe_memo.names and self.nwindows <= ARRAY_WINDOWS:
                for position in range(self.nwindows):
                    self.within[position] = self.windows[position]
                self.after = <int16_t*>malloc((LIMIT << self.nwindows) * sizeof(int16_t))
                if not self.after:
                    raise MemoryError()
                for position in range(LIMIT << self.nwindows):
                    self.after[position] = -1

    def __dealloc__(self):
        free(self.after)

    cdef Py_ssize_t remembered_opening(self, object fields):
        """The profile number the opener made before for these fields' input; -1 when not remembered."""
        if self.open_memo is None:
            return -1
        number = self.open_profiles.get(self.open_read(fields))
        return -1 if number is None else <Py_ssize_t>number

    cdef Py_ssize_t array_slot(self, int32_t profile, int64_t elapsed):
        """Where `after` keeps the profile following `profile` for an event `elapsed` after the trial opened."""
        cdef Py_ssize_t slot = profile, position
        for position in range(self.nwindows):
            slot = (slot << 1) | (0 <= elapsed <= self.within[position])
        return slot

    cdef Py_ssize_t remembered_observation(self, int32_t profile, int64_t elapsed, object fields):
        """The profile after an event of this input, from `profile`, as the observer worked out before; -1 when unknown."""
        cdef Py_ssize_t position
        if self.after:
            return self.after[self.array_slot(profile, elapsed)]
        key = [profile, self.observe_read(fields)]
        for position in range(self.nwindows):
            key.append(0 <= elapsed <= self.windows[position])
        number = self.observe_profiles.get(tuple(key))
        return -1 if number is None else <Py_ssize_t>number


cdef struct Slot:
    int32_t number  # the entry's, or EMPTY or DELETED
    uint32_t tag  # the high half of the key's hash: a probe passes a slot whose tag differs without reading its entry


cdef inline uint32_t _tag(Py_hash_t hash):
    return <uint32_t>(<uint64_t><size_t>hash >> 32)  # 0 where hashes have 32 bits: every probe then reads its entry


cdef struct Entry:
    Py_hash_t hash
    int64_t opened
    int32_t profile  # BOXED: the state is a Python object in `boxed` (the profile table was full)
    int32_t length
    int32_t slot  # its position in the index
    char inline[INLINE]
    char* spilled  # the key's bytes when longer than INLINE


cdef Entry* _entries(Py_ssize_t count, Entry* old, Py_ssize_t kept):
    """Room for `count` entries on cache-line boundaries, so that reading one touches one line; the first `kept` of
    `old` are moved there (and `old` freed). NULL when out of memory."""
    cdef Entry* entries = <Entry*>aligned_alloc(LINE, count * sizeof(Entry))
    if entries and old:
        memcpy(entries, old, kept * sizeof(Entry))
        free(old)
    return entries


cdef class PackedTrials:
    """Open trials by dependence key, each closing `close_after` after it opened (see the module docstring).

    States go in and out as a layout's packed ints (`opened << PROFILE_BITS | profile`), or as `(opened, slots)` once its
    profile table is full; `close_due` hands back how many trials due closed with each slot tuple, by tick.
    """

    cdef Entry* entries
    cdef Slot* index
    cdef int32_t* free_entries
    cdef int32_t* ring
    cdef Py_ssize_t mask, filled, capacity, top, free_count, ring_capacity, ring_head, ring_length, live
    cdef readonly int64_t close_after
    cdef dict boxed
    cdef object layout  # the layout whose folds `kinds` holds
    cdef dict kinds  # event kind -> _KindFold
    cdef dict column_kinds  # event kind -> _KindFold reading decoded structs
    cdef list late  # heap of (close time, entry) for trials opened out of time order
    cdef public list ended  # (close time, slots) of trials that ended before an event of their key came, not yet reported

    def __cinit__(self, int64_t close_after):
        self.close_after = close_after
        self.boxed = {}
        self.kinds = {}
        self.column_kinds = {}
        self.late = []
        self.ended = []
        self.mask = 7
        self.index = <Slot*>malloc(8 * sizeof(Slot))
        self.capacity = 8
        self.entries = _entries(8, NULL, 0)
        self.free_entries = <int32_t*>malloc(8 * sizeof(int32_t))
        self.ring_capacity = 8
        self.ring = <int32_t*>malloc(8 * sizeof(int32_t))
        if not (self.index and self.entries and self.free_entries and self.ring):
            raise MemoryError()
        self._clear_index()

    def __dealloc__(self):
        cdef Py_ssize_t number
        if self.entries:
            for number in range(self.top):
                free(self.entries[number].spilled)  # NULL once closed, or for a short key
        free(self.entries)
        free(self.index)
        free(self.free_entries)
        free(self.ring)

    def __len__(self):
        return self.live

    cdef void _clear_index(self):
        cdef Py_ssize_t slot
        for slot in range(self.mask + 1):
            self.index[slot].number = EMPTY
        self.filled = 0

    cdef inline const char* _key_of(self, Entry* entry):
        if entry.length <= INLINE:
            return <const char*>&entry.inline[0]
        return entry.spilled

    cdef Py_ssize_t _find(self, Py_hash_t hash, const char* key, Py_ssize_t length):
        """The entry of this key, or -1 - the free index slot where it would go. Probes are linear, so they stay in the
        cache line fetched for the first."""
        cdef Py_ssize_t slot = <size_t>hash & self.mask, free_slot = -1
        cdef uint32_t tag = _tag(hash)
        cdef int32_t number
        cdef Entry* entry
        while True:
            number = self.index[slot].number
            if number == EMPTY:
                return -1 - (slot if free_slot < 0 else free_slot)
            if number == DELETED:
                if free_slot < 0:
                    free_slot = slot
            elif self.index[slot].tag == tag:
                entry = &self.entries[number]
                if entry.hash == hash and entry.length == length and memcmp(self._key_of(entry), key, length) == 0:
                    return number
            slot = (slot + 1) & self.mask

    cdef int32_t _probable(self, Py_hash_t hash):
        """The entry a key of this hash most likely has (the first whose tag matches), or -1: what to fetch ahead."""
        cdef Py_ssize_t slot = <size_t>hash & self.mask
        cdef uint32_t tag = _tag(hash)
        cdef int32_t number = self.index[slot].number
        while number != EMPTY:
            if number >= 0 and self.index[slot].tag == tag:
                return number
            slot = (slot + 1) & self.mask
            number = self.index[slot].number
        return -1

    cdef int _reindex(self, Py_ssize_t size) except -1:
        """Rebuild the index at `size` slots (a power of two), dropping deleted marks."""
        cdef Slot* index = <Slot*>realloc(self.index, size * sizeof(Slot))
        cdef Py_ssize_t number, slot
        cdef Py_hash_t hash
        if not index:
            raise MemoryError()
        self.index = index
        self.mask = size - 1
        self._clear_index()
        for number in range(self.top):
            if self.entries[number].slot == EMPTY:
                continue
            hash = self.entries[number].hash
            slot = <size_t>hash & self.mask
            while self.index[slot].number != EMPTY:
                slot = (slot + 1) & self.mask
            self.index[slot].number = <int32_t>number
            self.index[slot].tag = _tag(hash)
            self.entries[number].slot = <int32_t>slot
            self.filled += 1
        return 0

    cdef Py_ssize_t _new_entry(self) except -1:
        cdef Entry* entries
        cdef int32_t* free_entries
        if self.free_count:
            self.free_count -= 1
            return self.free_entries[self.free_count]
        if self.top == self.capacity:
            entries = _entries(2 * self.capacity, self.entries, self.top)
            if not entries:
                raise MemoryError()
            self.entries = entries
            free_entries = <int32_t*>realloc(self.free_entries, 2 * self.capacity * sizeof(int32_t))
            if not free_entries:
                raise MemoryError()
            self.free_entries = free_entries
            self.capacity *= 2
        self.top += 1
        return self.top - 1

    cdef int _schedule(self, Py_ssize_t number, int64_t closes) except -1:
        """Closes in open order go to the ring; a trial opened before the latest one (a late event) to the heap."""
        cdef int32_t* ring
        cdef Py_ssize_t position, last
        if self.ring_length:
            last = self.ring[(self.ring_head + self.ring_length - 1) & (self.ring_capacity - 1)]
            if self.entries[last].opened + self.close_after > closes:
                heapq.heappush(self.late, (closes, number))
                return 0
        if self.ring_length == self.ring_capacity:
            ring = <int32_t*>malloc(2 * self.ring_capacity * sizeof(int32_t))
            if not ring:
                raise MemoryError()
            for position in range(self.ring_length):
                ring[position] = self.ring[(self.ring_head + position) & (self.ring_capacity - 1)]
            free(self.ring)
            self.ring = ring
            self.ring_head = 0
            self.ring_capacity *= 2
        self.ring[(self.ring_head + self.ring_length) & (self.ring_capacity - 1)] = <int32_t>number
        self.ring_length += 1
        return 0

    cdef int _set_state(self, Py_ssize_t number, object state) except -1:
        cdef Entry* entry = &self.entries[number]
        cdef int64_t packed
        if type(state) is int:
            if entry.profile == BOXED:  # an observed trial's slots found a number after all
                del self.boxed[number]
            packed = state
            entry.opened = packed >> BITS
            entry.profile = <int32_t>(packed & MASK)
        else:
            entry.opened = state[0]
            entry.profile = BOXED
            self.boxed[number] = state
        return 0

    cdef object _state(self, Py_ssize_t number):
        cdef Entry* entry = &self.entries[number]
        if entry.profile == BOXED:
            return self.boxed[number]
        return (entry.opened << BITS) | entry.profile

    cdef int _open(self, Py_ssize_t found, Py_hash_t hash, const char* key, Py_ssize_t length, object state) except -1:
        cdef int64_t packed
        cdef Py_ssize_t number
        if type(state) is int:
            packed = state
            self._open_at(found, hash, key, length, packed >> BITS, <int32_t>(packed & MASK))
        else:
            number = self._open_at(found, hash, key, length, state[0], BOXED)
            self.boxed[number] = state
        return 0

    cdef Py_ssize_t _open_at(self, Py_ssize_t found, Py_hash_t hash, const char* key, Py_ssize_t length, int64_t opened, int32_t profile) except -1:
        """Open a trial at `opened` with this profile (BOXED: the caller keeps its state in `boxed`); return its entry."""
        cdef Py_ssize_t slot, number
        cdef Entry* entry
        if self.index[-1 - found].number == EMPTY and 3 * (self.filled + 1) > 2 * (self.mask + 1):
            size = self.mask + 1
            while 3 * (self.live + 1) > size:  # at most a third full after a rebuild
                size *= 2
            self._reindex(size)
            found = self._find(hash, key, length)
        slot = -1 - found
        number = self._new_entry()
        entry = &self.entries[number]
        entry.hash = hash
        entry.length = <int32_t>length
        entry.spilled = NULL
        entry.opened = opened
        entry.profile = profile
        if length <= INLINE:
            memcpy(entry.inline, key, length)
        else:
            entry.spilled = <char*>malloc(length)
            if not entry.spilled:
                raise MemoryError()
            memcpy(entry.spilled, key, length)
        if self.index[slot].number == EMPTY:
            self.filled += 1
        self.index[slot].number = <int32_t>number
        self.index[slot].tag = _tag(hash)
        entry.slot = <int32_t>slot
        self.live += 1
        self._schedule(number, opened + self.close_after)
        return number

    cdef object _close(self, Py_ssize_t number, list table):
        """Free the entry; return its trial's slot tuple."""
        slots = self._end(number, table)
        self._release(number)
        return slots

    cdef object _end(self, Py_ssize_t number, list table):
        """Take the trial out of the index (its key may open another) and hand back its slot tuple; the entry stays
        scheduled, marked ENDED, until its close time frees it (`_release`)."""
        cdef Entry* entry = &self.entries[number]
        slots = self.boxed.pop(number)[1] if entry.profile == BOXED else table[entry.profile]
        self.index[entry.slot].number = DELETED
        entry.slot = EMPTY
        if entry.spilled:
            free(entry.spilled)
            entry.spilled = NULL
        entry.profile = ENDED
        self.live -= 1
        return slots

    cdef void _release(self, Py_ssize_t number):
        """Free the entry of a trial that ended early, when its schedule reaches it."""
        self.free_entries[self.free_count] = <int32_t>number
        self.free_count += 1

    def take_ended(self, through, int64_t step):
        """The slot tuples of trials that ended early and close at or before `through` (all when None), by tick."""
        cdef dict ticks = {}
        keep = []
        for closes, slots in self.ended:
            if through is None or closes <= through:
                ticks.setdefault(_ceil_to(closes, step), []).append(slots)
            else:
                keep.append((closes, slots))
        self.ended = keep
        return ticks

    cdef _KindFold _kind_fold(self, object kind, object layout, object columns=None):
        """How events of `kind` meet this layout's trials, made on its first event (and anew for another layout); with
        `columns` (`EventColumns`), for events read from their structs."""
        if layout is not self.layout:
            self.layout, self.kinds, self.column_kinds = layout, {}, {}
        opener = layout.openers.get(kind)
        open_memo = layout.open_memos.get(kind)
        if opener is None:
            opener, open_memo = layout.open_any, layout.open_any_memo
        observer, observe_memo = layout.observers.get(kind), layout.observe_memos.get(kind)
        if columns is None:
            fold = self.kinds[kind] = _KindFold(opener, open_memo, observer, observe_memo)
            return fold
        open_read = None if open_memo is None else columns.reader(kind, open_memo.names)
        observe_read = None if observe_memo is None else columns.reader(kind, observe_memo.names)
        fold = _KindFold(opener, open_memo if open_read is not None else None, observer, observe_memo if observe_read is not None else None, open_read, observe_read)
        self.column_kinds[kind] = fold
        return fold

    cdef Py_ssize_t _fold_one(self, object key, object time, _KindFold fold, object reading, object columns, Py_ssize_t row, list table) except -1:
        """Fold one event into its key's trial; return 1 where it opened none and met none. The fold's memos read
        `reading` (the event's fields, or its struct); an opener or observer is handed the fields (of `columns`' line
        `row` where given)."""
        cdef Py_ssize_t length, found, number
        cdef Py_hash_t hash = PyObject_Hash(key)
        cdef const char* data = PyUnicode_AsUTF8AndSize(key, &length)
        cdef int64_t when = time, closes
        cdef Entry* entry
        cdef bint remembers
        found = self._find(hash, data, length)
        if found >= 0:
            closes = self.entries[found].opened + self.close_after
            if when > closes:
                self.ended.append((closes, self._end(found, table)))
                found = self._find(hash, data, length)
        if found < 0:
            if fold.opener is None:
                return 1
            number = fold.remembered_opening(reading)
            if number >= 0:
                self._open_at(found, hash, data, length, when, <int32_t>number)
            else:
                self._open(found, hash, data, length, fold.opener(time, reading if columns is None else columns.fields(row)))
        elif fold.observer is not None:
            entry = &self.entries[found]
            remembers = entry.profile >= 0 and fold.observe_memo is not None
            if remembers:
                number = fold.remembered_observation(entry.profile, when - entry.opened, reading)
                if number >= 0:
                    entry.profile = <int32_t>number
                    return 0
            state = fold.observer(self._state(found), time, reading if columns is None else columns.fields(row))
            if remembers and fold.after and type(state) is int:
                fold.after[fold.array_slot(entry.profile, when - entry.opened)] = <int16_t>(<int64_t>state & MASK)
            self._set_state(found, state)
        return 0

    cdef void _fetch_ahead(self, list keys, Py_ssize_t position, Py_ssize_t count):
        """The table is far larger than the cache: fetch the index slot a later event will probe, and its entry."""
        cdef int32_t ahead
        if position + AHEAD < count:
            __builtin_prefetch(&self.index[<size_t>PyObject_Hash(keys[position + AHEAD]) & self.mask])
        if position + AHEAD // 2 < count:
            ahead = self._probable(PyObject_Hash(keys[position + AHEAD // 2]))
            if ahead >= 0:
                __builtin_prefetch(&self.entries[ahead])

    def fold(self, list events, layout):
        """Fold events `(key, time, kind, fields, origin)` (in order) into the open trials by the folds of `layout` (a
        `TrialLayout` without closing events); return how many opened none. An event dated after its key's trial ended
        (`close_after` past its opening) does not join it: the trial ends then (`ended`), and the event meets no trial,
        however the events were batched. An input the layout's opener or observer has met before changes the trial's
        profile number here, without calling it."""
        cdef dict kinds = self.kinds if layout is self.layout else {}
        cdef list table = layout.profiles.table
        cdef list keys = [(<tuple>item)[0] for item in events]
        cdef Py_ssize_t unmatched = 0, position, count = len(events)
        cdef _KindFold fold
        cdef tuple event
        for position in range(count):
            self._fetch_ahead(keys, position, count)
            event = <tuple>events[position]
            fold = kinds.get(event[2])
            if fold is None:
                fold = self._kind_fold(event[2], layout)
                kinds = self.kinds
            unmatched += self._fold_one(event[0], event[1], fold, event[3], None, 0, table)
        return unmatched

    def fold_columns(self, columns, layout):
        """`fold` for the events of an `EventColumns` block, read from their structs: no event tuple or dict of fields
        is made, but for an input no opener or observer has met before."""
        cdef dict kinds = self.column_kinds if layout is self.layout else {}
        cdef list table = layout.profiles.table
        cdef list keys = columns.keys, times = columns.times, structs = columns.structs
        cdef dict kind_of = columns.kind_of
        cdef Py_ssize_t unmatched = 0, position, count = len(keys)
        cdef _KindFold fold
        for position in range(count):
            self._fetch_ahead(keys, position, count)
            typed = structs[position]
            kind = kind_of[type(typed)]
            fold = kinds.get(kind)
            if fold is None:
                fold = self._kind_fold(kind, layout, columns)
                kinds = self.column_kinds
            unmatched += self._fold_one(keys[position], times[position], fold, typed, columns, position, table)
        return unmatched

    def close_due(self, through, int64_t step, list table):
        """Close every trial due at or before `through` (all when None); return how many closed with each slot tuple, by
        the tick (the next multiple of `step`) they close in, the slot tuples in the order they first closed there.
        `table` is the layout's profile table."""
        cdef dict ticks = {}
        cdef dict group = None
        cdef int64_t last = 0, closes, tick, end = 0
        cdef Py_ssize_t number, touched = 0
        cdef int32_t profile, ahead
        cdef bint everything = through is None
        cdef int32_t* counts = <int32_t*>calloc(2 * LIMIT, sizeof(int32_t))  # per profile, in the tick being closed
        cdef int32_t* order = counts + LIMIT  # the profiles that tick has closed, in the order they first did
        if not counts:
            raise MemoryError()
        if not everything:
            end = through
        try:
            while self.ring_length:
                if self.ring_length > AHEAD:  # fetch the entries closing next, and their index slots, into the cache
                    __builtin_prefetch(&self.entries[self.ring[(self.ring_head + AHEAD) & (self.ring_capacity - 1)]])
                    ahead = self.entries[self.ring[(self.ring_head + AHEAD // 2) & (self.ring_capacity - 1)]].slot
                    if ahead >= 0:
                        __builtin_prefetch(&self.index[ahead])
                number = self.ring[self.ring_head]
                closes = self.entries[number].opened + self.close_after
                if not everything and closes > end:
                    break
                self.ring_head = (self.ring_head + 1) & (self.ring_capacity - 1)
                self.ring_length -= 1
                if self.entries[number].profile == ENDED:
                    self._release(number)
                    continue
                tick = _ceil_to(closes, step)
                if group is None or tick != last:
                    touched = _add_counts(group, counts, order, touched, table)
                    group = ticks.get(tick)
                    if group is None:
                        group = ticks[tick] = {}
                    last = tick
                profile = self.entries[number].profile
                slots = self._close(number, table)
                if profile < 0:  # boxed: its slots are in no profile
                    group[slots] = group.get(slots, 0) + 1
                    continue
                if counts[profile] == 0:
                    order[touched] = profile
                    touched += 1
                    group.setdefault(slots, 0)  # its place in the order; its count is added when the tick is done
                counts[profile] += 1
            _add_counts(group, counts, order, touched, table)
        finally:
            free(counts)
        while self.late and (everything or self.late[0][0] <= end):
            closes, number = heapq.heappop(self.late)
            if self.entries[number].profile == ENDED:
                self._release(number)
                continue
            group = ticks.setdefault(_ceil_to(closes, step), {})
            slots = self._close(number, table)
            group[slots] = group.get(slots, 0) + 1
        return ticks

    def evict(self, Py_ssize_t count, list table):
        """Drop up to `count` trials, those that close last (the newest openings), without reporting them, so the trials
        already open are kept and close in their time; return how many were dropped. `table` is the layout's profile
        table."""
        cdef Py_ssize_t dropped = 0, number
        while dropped < count and (self.ring_length or self.late):
            if self.ring_length:
                self.ring_length -= 1
                number = self.ring[(self.ring_head + self.ring_length) & (self.ring_capacity - 1)]
            else:  # only trials opened out of order are left: the one that closes last
                latest = self.late.index(max(self.late))
                number = self.late.pop(latest)[1]
                heapq.heapify(self.late)
            if self.entries[number].profile == ENDED:  # closed already, reported as it ended: not an open trial
                self._release(number)
                continue
            self._close(number, table)
            dropped += 1
        return dropped

    def states(self):
        """Every open trial's key and state, in the order they close."""
        cdef Py_ssize_t position, number
        cdef Entry* entry
        out = []
        order = [self.ring[(self.ring_head + position) & (self.ring_capacity - 1)] for position in range(self.ring_length)]
        order.extend(number for _, number in sorted(self.late))
        for number in order:
            entry = &self.entries[number]
            if entry.profile != ENDED:
                out.append((self._key_of(entry)[:entry.length].decode(), self._state(number)))
        return out

    def copy(self):
        """An independent copy (for the recovery store): the native arrays copied as they are, long keys duplicated."""
        cdef PackedTrials clone = PackedTrials(self.close_after)
        cdef Py_ssize_t number
        cdef Entry* entry
        cdef char* spilled
        free(clone.index)
        free(clone.entries)
        free(clone.free_entries)
        free(clone.ring)
        clone.index = <Slot*>malloc((self.mask + 1) * sizeof(Slot))
        clone.entries = _entries(self.capacity, NULL, 0)
        clone.free_entries = <int32_t*>malloc(self.capacity * sizeof(int32_t))
        clone.ring = <int32_t*>malloc(self.ring_capacity * sizeof(int32_t))
        if not (clone.index and clone.entries and clone.free_entries and clone.ring):
            raise MemoryError()
        memcpy(clone.index, self.index, (self.mask + 1) * sizeof(Slot))
        memcpy(clone.entries, self.entries, self.top * sizeof(Entry))
        memcpy(clone.free_entries, self.free_entries, self.free_count * sizeof(int32_t))
        memcpy(clone.ring, self.ring, self.ring_capacity * sizeof(int32_t))
        for number in range(self.top):  # `top` grows with the copies, so a failure frees only the clone's own keys
            entry = &clone.entries[number]
            if entry.spilled:
                spilled = <char*>malloc(entry.length)
                if not spilled:
                    entry.spilled = NULL
                    raise MemoryError()
                memcpy(spilled, entry.spilled, entry.length)
                entry.spilled = spilled
            clone.top = number + 1
        clone.mask, clone.filled, clone.capacity, clone.free_count = self.mask, self.filled, self.capacity, self.free_count
        clone.ring_capacity, clone.ring_head, clone.ring_length, clone.live = self.ring_capacity, self.ring_head, self.ring_length, self.live
        clone.boxed = dict(self.boxed)
        clone.late = list(self.late)
        clone.ended = list(self.ended)
        return clone

    @staticmethod
    def restore(int64_t close_after, states, ended=()):
        """Trials from `(key, state)` pairs in the order they close (see `states`), and the ended ones not yet reported."""
        cdef PackedTrials trials = PackedTrials(close_after)
        trials.ended = list(ended)
        cdef Py_ssize_t length, found
        cdef Py_hash_t hash
        cdef const char* data
        for key, state in states:
            hash = PyObject_Hash(key)
            data = PyUnicode_AsUTF8AndSize(key, &length)
            found = trials._find(hash, data, length)
            if found >= 0:
                raise ValueError(f"trial key {key!r} given twice")
            trials._open(found, hash, data, length, state)
        return trials

    def __reduce__(self):
        return (PackedTrials.restore, (self.close_after, self.states(), self.ended))
