// What Redis's append-only file says happened to a few jobs. The soak's Redis
// writes every command to the AOF (appendfsync always, timestamps on, no
// rewrite), so the file is the whole history: the push of a job, and the
// command that took it out of its queue. Lists are replayed (jids only) so a
// pop, which names no job, is matched to the job it removed. A pop outside
// MULTI is a client's own BRPOP (Ruby's basic fetch: the bridge pops only in
// scripts, whose effects the AOF wraps in MULTI/EXEC). Each run of the server
// begins with a SELECT, so sessions count the Redis restarts.
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";

export interface AofEvent {
  /** Epoch seconds of the last timestamp annotation before the command. */
  ts: number;
  /** Which run of the server wrote it (1 for the first). */
  session: number;
  /** The command as written, shortened: name, key, what it did to the job. */
  what: string;
  /** A pop (not a move) that took the job out of a list, outside MULTI: a client's own BRPOP/RPOP. */
  barePop: boolean;
  /** How many commands the same session wrote after this one (small: just before a kill). */
  commandsAfter: number;
  index: number;
}

/** Lists never holding jobs whose replay would only cost memory. */
const SKIPPED_LISTS = new Set(["chaos:runs", "soak:cron-runs"]);
const jidOf = (s: string) => /"jid":"([^"]+)"/.exec(s)?.[1] ?? "";

/** The incremental AOF files in order, per the manifest (Redis 7's multi-part AOF). */
function incrFiles(dir: string): string[] {
  const aofDir = join(dir, "appendonlydir");
  const manifest = join(aofDir, "appendonly.aof.manifest");
  if (!existsSync(manifest)) return [];
  return readFileSync(manifest, "utf8")
    .split("\n")
    .map((l) => /^file (\S+) seq \d+ type i/.exec(l)?.[1])
    .filter((f): f is string => f !== undefined)
    .map((f) => join(aofDir, f));
}

/** Yields each command (as strings) and timestamp annotation; stops at a truncated tail. */
function* commands(file: string): Generator<string[] | number> {
  const fd = openSync(file, "r");
  const chunk = Buffer.alloc(8 << 20);
  let buf = Buffer.alloc(0);
  let eof = false;
  try {
    for (;;) {
      let pos = 0;
      for (;;) {
        const parsed = parseOne(buf, pos);
        if (!parsed) break;
        pos = parsed.next;
        yield parsed.value;
      }
      buf = buf.subarray(pos);
      if (eof) return;
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) eof = true;
      else buf = Buffer.concat([buf, chunk.subarray(0, n)]);
    }
  } finally {
    closeSync(fd);
  }
}

function parseOne(buf: Buffer, start: number): { value: string[] | number; next: number } | null {
  const eol = buf.indexOf("\r\n", start);
  if (eol < 0) return null;
  const head = buf.toString("latin1", start, eol);
  if (head.startsWith("#TS:")) return { value: Number(head.slice(4)), next: eol + 2 };
  if (!head.startsWith("*")) throw new Error(`unexpected AOF line ${JSON.stringify(head.slice(0, 40))}`);
  const args: string[] = [];
  let pos = eol + 2;
  for (let i = Number(head.slice(1)); i > 0; i--) {
    const e = buf.indexOf("\r\n", pos);
    if (e < 0) return null;
    const len = Number(buf.toString("latin1", pos + 1, e));
    if (buf.length < e + 2 + len + 2) return null;
    args.push(buf.toString("utf8", e + 2, e + 2 + len));
    pos = e + 2 + len + 2;
  }
  return { value: args, next: pos };
}

/** Every AOF event of the jobs in `jids`, by jid, in order. */
export function aofTrail(dir: string, jids: ReadonlySet<string>): Map<string, AofEvent[]> {
  const trail = new Map<string, AofEvent[]>();
  const lists = new Map<string, string[]>();
  const sessionEnds: number[] = [];
  let ts = 0;
  let session = 0;
  let index = 0;
  let inMulti = false;
  const note = (jid: string, what: string, barePop = false) => {
    if (!jids.has(jid)) return;
    let l = trail.get(jid);
    if (!l) trail.set(jid, (l = []));
    l.push({ ts, session, what, barePop, commandsAfter: 0, index });
  };
  const list = (k: string) => {
    let l = lists.get(k);
    if (!l) lists.set(k, (l = []));
    return l;
  };
  const pop = (k: string, fromRight: boolean, n: number, cmd: string, to?: string) => {
    const l = list(k);
    for (let i = 0; i < n && l.length; i++) {
      const jid = (fromRight ? l.pop() : l.shift())!;
      if (to && !SKIPPED_LISTS.has(to)) list(to).unshift(jid);
      // A move keeps the job in Redis (the bridge's BRPOPLPUSH); a bare pop hands it to the client alone.
      note(
        jid,
        `${cmd} ${k}${to ? ` -> ${to}` : ""}${inMulti ? " (in MULTI: a script's effects)" : ""}`,
        !inMulti && !to,
      );
    }
  };
  for (const file of incrFiles(dir)) {
    for (const c of commands(file)) {
      if (typeof c === "number") {
        ts = c;
        continue;
      }
      index++;
      const [name = "", key = "", ...rest] = c;
      const cmd = name.toUpperCase();
      if (cmd === "SELECT") {
        if (session > 0) sessionEnds[session] = index - 1;
        session++;
        continue;
      }
      if (cmd === "MULTI") inMulti = true;
      else if (cmd === "EXEC") inMulti = false;
      else if (!SKIPPED_LISTS.has(key)) replay(cmd, key, rest);
      for (const a of c.slice(1)) {
        const jid = a.startsWith("{") ? jidOf(a) : a.split(":")[0]!;
        if (jids.has(jid)) note(jid, `${cmd} ${key}${inMulti ? " (in MULTI)" : ""}`);
      }
    }
  }
  sessionEnds[session] = index;
  for (const events of trail.values()) for (const e of events) e.commandsAfter = sessionEnds[e.session]! - e.index;
  return trail;

  function replay(cmd: string, key: string, rest: string[]) {
    if (cmd === "LPUSH") list(key).unshift(...rest.map(jidOf).reverse());
    else if (cmd === "RPUSH") list(key).push(...rest.map(jidOf));
    else if (cmd === "RPOP" || cmd === "LPOP") pop(key, cmd === "RPOP", Number(rest[0] ?? 1), cmd);
    else if (cmd === "RPOPLPUSH" || cmd === "BRPOPLPUSH") pop(key, true, 1, cmd, rest[0]);
    else if (cmd === "LMOVE" || cmd === "BLMOVE") pop(key, rest[1] === "RIGHT", 1, cmd, rest[0]);
    else if (cmd === "LREM") {
      const l = list(key);
      const i = l.indexOf(jidOf(rest[1] ?? ""));
      if (i >= 0) l.splice(i, 1);
    } else if (cmd === "DEL" || cmd === "UNLINK") for (const k of [key, ...rest]) lists.delete(k);
  }
}
