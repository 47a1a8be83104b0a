package redisstore

import "github.com/redis/go-redis/v9"

// What the store keeps, per list identity, under keys that share one hash
// tag (so that a cluster would keep them in one slot):
//
//	hdgw:{H}:c:<id>        a chain entry: the page that ended at record <id>
//	hdgw:{H}:w:<name>      a window: its meta, its envelope, and its pages' last ids
//	hdgw:{H}:w:<name>:p:<j> its page j: the page's records and the one after them
//	hdgw:{H}:q:<call>      a page on its way to the instance, for the moment of one call
//	hdgw:{H}:a:<id>        a read ahead after record <id>, claimed (ahead.go)
//	hdgw:{H}:d:<id>        that read, over
//	hdgw:{H}:f             the list's fence: run and time (fenceLua)
//
// H is the keyed hash of the list identity (keys.go). Times are the
// store's own (TIME, in microseconds) where the walk rule compares them,
// and the writing instance's (in nanoseconds) where only that instance's
// clock can say how old an entry is to it.
//
// A chain entry's value is one line of fields:
//
//	run at made win k imade size rate backoff
//
// run is the store's run_id when written; at the walk rule's time of the
// answer the page's last record came from; made the store's time of the
// write; win the window the next records are in ('-' for none) and k the
// index there of the record after <id>; imade the writing instance's
// time; size, rate and backoff the walk's read-ahead state.
//
// A window's meta is one line:
//
//	run at imade n start fromStart ended records k0 size first floor
//
// with at the walk rule's time of its answer, n its records, start its
// first record's offset, fromStart, ended and records 0 or 1, k0 the
// index of its first page's first record (the record after the page
// whose answer it was), size the walk's page size, first its first
// page's size (size, or less for a window read ahead of the walker,
// whose first page ends a page that starts in the window before it),
// and floor (the rest of the line) its first id when it does not start
// the list. Its pages are cut when it is written, the first at first
// records and each after it at size, as strings of entries: an entry is
// a record, its id's length as a uvarint, its id, its bytes' length as a
// uvarint, its bytes. Element 2+j of the window is page j's last id when
// a record follows it in the window, and its last element the window's
// last id.
//
// Why pages, not one string of records cut on each call: Redis's Lua
// hashes every byte of every string a script makes, so a page's bytes
// read or written through a script cost more than the rest of the call
// (57 against 13 us for 35 KB, Redis 7). Bytes never cross Lua here: a
// window's pages are written by plain SETs in the pipeline before its
// script, and a page is read by a COPY in the cut script to a key of the
// call's own that a GETDEL in the same pipeline reads back.

// fenceLua starts every script that reads or writes a chain entry: t,
// the store's TIME, and fence, which returns the list's fence (KEYS[4] of
// the cut and walked scripts, hdgw:{H}:f) as a time, making it now when
// it is not there or not of this run (ARGV[1]), and keeps it alive for
// px milliseconds more, as long as any entry written now. No entry or
// window whose walk rule time is older than the fence serves or is
// written (see Store and fenceScript): a fence missing (flushed, or the
// list idle for a TTL) or of another run (a failover, and back) is now,
// so that whatever a store lost, nothing written before it was lost
// decides a walk after.
const fenceLua = `
local t = redis.call('TIME')
local function fence(key, run, px)
	local f, frun, fat = redis.call('GET', key), nil, nil
	if f then frun, fat = string.match(f, '^(%S+) (%d+)$') end
	if frun ~= run then
		fat = t[1] .. string.sub('00000' .. t[2], -6)
		redis.call('SET', key, run .. ' ' .. fat, 'PX', px)
	else
		redis.call('PEXPIRE', key, px)
	end
	return tonumber(fat)
end
`

// fenceScript moves a list's fence (KEYS[1]) to the store's now, under
// the run_id ARGV[1], for ARGV[2] milliseconds: an instance that could
// not learn whether a page's chain entry was written runs it before the
// page is sent (see Walked), so that no entry of the list written for an
// older walk decides the page's next one. A fence already later stays.
var fenceScript = redis.NewScript(fenceLua + `
local now = tonumber(t[1] .. string.sub('00000' .. t[2], -6))
if fence(KEYS[1], ARGV[1], ARGV[2]) <= now then -- past every entry written before, within the microsecond
	redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. string.format('%.0f', now + 1), 'PX', ARGV[2])
end
return 1
`)

// cutScript answers Cut in one round trip, with the GETDEL of KEYS[3]
// after it. KEYS[1] is the chain entry, KEYS[2] the prefix of the
// list's keys, KEYS[3] the call's own key to copy the page to, KEYS[4]
// the list's fence (fenceLua), which an entry's time must not be older
// than; ARGV are
// the run_id the instance reads the store as, the page size, "1" for a
// Fresh page, the TTL in microseconds, the instance's time and the TTL
// in nanoseconds, and how long in milliseconds to claim a read ahead for
// ("0": the instance cannot read ahead now). It returns {now} when no live entry of this run,
// as new as the fence, continues the walk, {now, entry} when the page is not to be cut
// (Fresh, or no window), {now, entry, ""} when the entry's window is
// gone, {now, entry, "-"} when the walk rule or the TTL refuses it or the
// window holds nothing after the cursor, and {now, entry, meta,
// envelope, written, skip, reaches} when KEYS[3] holds the window's page
// the cursor is in: skip records of it up to the cursor, then the
// records after the cursor to the page's end and the one after it (or
// fewer, where the window ends: reaches is then 1). Two values follow:
// when the page is the window's marker (liststore.Marker: a page at the
// walk's size, half the window's whole pages before its last) and the
// script claimed the read ahead after the window's last record for this
// instance (ahead.go), that id and how many records follow the window's
// last whole page, for the engine to read the walk's next window ahead;
// else "" and 0.
//
// A cursor at a page boundary, asked at the window's page size, is the
// walk's next page as the engine will cut it: when a record follows that
// page in the window, the script writes its chain entry itself (written
// is 1), as walkedScript would, so that most pages of a walk cost the
// store one round trip. Any other cursor (a client that changed _perPage
// mid-walk) gets the records after it to its window page's end, which
// the engine starts the page with and stitches the backend's on; that
// answer is then the walk's window, at the new size. The entry carries
// the walk's read-ahead state on unchanged; its pace is taken again at
// the next page read from the backend.
var cutScript = redis.NewScript(fenceLua + `
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local fat = fence(KEYS[4], ARGV[1], math.floor(tonumber(ARGV[4]) / 1000))
local c = redis.call('GET', KEYS[1])
if not c then return {now} end
local run, at, made, win, k, imade, wsize, rate, backoff =
	string.match(c, '^(%S+) (%d+) (%d+) (%S+) (%d+) (%d+) (%d+) (%S+) (%d)$')
local ttl, inow, ittl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if run ~= ARGV[1] or tonumber(at) < fat or now - tonumber(made) >= ttl or inow - tonumber(imade) >= ittl then return {now} end
if ARGV[3] == '1' or win == '-' then return {now, c} end
local wk = KEYS[2] .. 'w:' .. win
local meta = redis.call('LINDEX', wk, 0)
if not meta then return {now, c, ''} end
local wrun, wat, wimade, n, ended, k0, size, first =
	string.match(meta, '^(%S+) (%d+) (%d+) (%d+) %S+ %d (%d) %d (%d+) (%d+) (%d+) ')
if wrun ~= run or tonumber(wat) < tonumber(at) or now - tonumber(wat) >= ttl or inow - tonumber(wimade) >= ittl then
	return {now, c, '-'}
end
k, k0, size, n, first = tonumber(k), tonumber(k0), tonumber(size), tonumber(n), tonumber(first)
if k < k0 or k >= n then return {now, c, '-'} end
local j, skip, plen = 0, k - k0, first
if skip >= first then
	j = 1 + math.floor((skip - first) / size)
	skip, plen = skip - first - (j - 1) * size, size
end
local pend = k0 + first + j * size -- past page j's last record
if redis.call('COPY', wk .. ':p:' .. j, KEYS[3], 'REPLACE') == 0 then return {now, c, ''} end
local written = 0
local whole = skip == 0 and tonumber(ARGV[2]) == size
local y = whole and redis.call('LINDEX', wk, 2 + j)
if y and y ~= '' then
	local key = KEYS[2] .. 'c:' .. y
	local old = redis.call('GET', key)
	local oat = old and string.match(old, '^' .. run .. ' (%d+) ')
	if not (oat and tonumber(oat) > tonumber(wat)) then
		redis.call('SET', key, run .. ' ' .. wat .. ' ' .. t[1] .. string.sub('00000' .. t[2], -6) .. ' ' .. win .. ' ' ..
			(k + plen) .. ' ' .. ARGV[5] .. ' ' .. wsize .. ' ' .. rate .. ' ' .. backoff, 'PX', math.floor(ttl / 1000))
	end
	written = 1
end
local reaches = 0
if pend + 1 >= n then reaches = 1 end
local ahead, head = '', 0
local last = n - 1 - k0 - first -- past the first page's last record, to the window's last
if whole and ended == '0' and last >= 0 then
	local pages = 1 + math.floor(last / size) -- whole pages: a record follows each
	if ARGV[7] ~= '0' and pages - 1 - j == math.floor(pages / 2) then
		local x = redis.call('LINDEX', wk, -1)
		if redis.call('SET', KEYS[2] .. 'a:' .. x, '1', 'NX', 'PX', ARGV[7]) then
			redis.call('DEL', KEYS[2] .. 'd:' .. x)
			ahead, head = x, last - (pages - 1) * size + 1
		end
	end
end
return {now, c, meta, redis.call('LINDEX', wk, 1), written, skip, reaches, ahead, head}
`)

// walkedScript records a page in one round trip, atomically, after the
// SETs of its window's pages in the same pipeline. KEYS[1] is the chain
// entry and KEYS[2] the window to write; either is KEYS[3], the list's
// prefix (never a key of its own), when there is none, so that every key
// the script names is the store's (an ACL user limited to hdgw:* may run
// it); KEYS[4] is the list's fence (fenceLua): a page whose time is
// older writes nothing, and the script returns 0; KEYS[5] on are the
// window's pages. ARGV: [1] the run_id, [2] the
// walk rule's time of the page's answers ("" when the page has none: the
// store's now, later than its calls, which only admits fewer windows),
// [3] the chain entry's fields after made, [4] the TTL in milliseconds,
// [5] the window's meta after at, [6] its envelope, [7] on its pages'
// last ids. The window is written only when all its pages are there (a
// SET refused for memory leaves a chain entry to a window that is not,
// which costs a call). An entry already there for the same id whose time
// is later stays as it is, window and all: the rule then holds for every
// walk through that record, the later walk's window serving the earlier
// walk too (a newer answer is never the past to it).
var walkedScript = redis.NewScript(fenceLua + `
local now = t[1] .. string.sub('00000' .. t[2], -6)
local at = ARGV[2]
if at == '' then at = now end
if tonumber(at) < fence(KEYS[4], ARGV[1], ARGV[4]) then return 0 end
if KEYS[2] ~= KEYS[3] and #KEYS > 4 and redis.call('EXISTS', unpack(KEYS, 5)) == #KEYS - 4 then
	redis.call('RPUSH', KEYS[2], ARGV[1] .. ' ' .. at .. ' ' .. ARGV[5], ARGV[6], unpack(ARGV, 7))
	redis.call('PEXPIRE', KEYS[2], ARGV[4])
end
if KEYS[1] ~= KEYS[3] then
	local old = redis.call('GET', KEYS[1])
	if old then
		local orun, oat = string.match(old, '^(%S+) (%d+) ')
		if orun == ARGV[1] and tonumber(oat) > tonumber(at) then return 1 end
	end
	redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. at .. ' ' .. now .. ' ' .. ARGV[3], 'PX', ARGV[4])
end
return 1
`)
