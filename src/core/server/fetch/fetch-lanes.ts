// A capsule's fetch lanes: each lane is a fetcher on a connection of its own,
// whose fetch loop (../manager.ts) fetches for the capsule's shared slots, so one
// lane's round trip overlaps the other's jobs. How many lanes a capsule gets,
// how many jobs a lane's fetch asks for, and what the lanes share: their
// working lists (one registration, one reclaim after a lost fetch reply or a
// reconnect) and the wait for room to fetch.
import type { Redis } from "ioredis";
import { closeOnRefusedSelect, type ConnectionWatch, isConnectionError } from "../../redis/availability.js";
import { blockingOptions, networkTimeoutOf, resolveNetworkTimeout, watchSilence } from "../../redis/network.js";
import { FETCH_TIMEOUT_SECONDS, type Fetcher } from "./fetch.js";
import type { Logger } from "../../logging/logger.js";

/**
 * How many fetch lanes (connections, each fetching for the capsule's shared
 * slots) a capsule gets unless told. A second lane lets one lane's round trip
 * overlap the other's, but only pays where each lane can still fetch large
 * batches. Basic fetch never holds more jobs than free slots, so two lanes
 * halve each batch and double the fetches: each fetch costs a socket write
 * and a reply to parse. One lane drained 14-15% faster at concurrency 10,
 * and as fast or faster with jobs that wait or compute, from concurrency 4
 * to 100 (bench/results/basic-one-lane.md).
 * Reliable fetch pays 4 commands a batch (the Lua call, its RPOP, HSET, and
 * the HDEL of the acknowledgements it carries). With fetch-ahead each lane
 * fetches batches as large as the capsule's concurrency (laneBatch), so two
 * lanes cost no more commands than one and their round trips overlap: at
 * concurrency 10 one lane spent a third of a drain waiting for Redis
 * (bench/results/reliable-two-lanes.md). Without fetch-ahead a lane's batch
 * cannot exceed its share of free slots, so the second lane comes only from
 * concurrency 16, where each batch still holds 8 jobs (bench/results/
 * hot-path-allocation.md, section 3).
 */
export function defaultFetchLanes(concurrency: number, reliable: boolean, fetchAhead = false): number {
  if (!reliable) return 1;
  return concurrency >= (fetchAhead ? 4 : 16) ? 2 : 1;
}

/**
 * Basic fetch on a slow network: how many lanes in all it may open past its
 * first. Sidekiq has one BRPOP in flight per idle processor; one lane has one
 * fetch in flight, so on a distant Redis the slots freed during a round trip
 * wait for it (8 jobs/s where Ruby did 16 at 150 ms each way). These lanes
 * open only once fetches are slow (SLOW_FETCH_MS) and fetch only while they
 * are, each for the free slots no fetch has reserved: never more jobs than
 * free slots, and on a local Redis still one lane's whole batches.
 */
export function spareLanes(concurrency: number, reliable: boolean, lanes: number): number {
  return reliable ? 0 : Math.max(0, Math.min(concurrency, 8) - lanes);
}

/**
 * Fetches that came back full (several jobs, as many as asked: the queue had
 * them, so no time went to waiting for jobs) taking longer than this on
 * average: the network is slow.
 */
export const SLOW_FETCH_MS = 5;

/**
 * The most jobs one lane's fetch asks for: its share of the slots, or, for
 * reliable fetch with fetch-ahead, the whole concurrency (the lanes share the
 * slots; what finds no free slot waits as a fetch ahead).
 */
export function laneBatch(concurrency: number, lanes: number, wholeBatches: boolean): number {
  return wholeBatches ? concurrency : Math.ceil(concurrency / lanes);
}

/**
 * A lane's own connection. A fetch must never be sent twice: if a connection
 * drops with a fetch in flight, Redis may have moved a job already. The fetch
 * fails instead, and the lanes reclaim. Its silence is bounded by the fetch's
 * block plus the command connection's timeout (an instance passed in without
 * one: the default), so a dropped flow is found as Sidekiq finds it.
 */
function laneConnection(redis: Redis, watch: ConnectionWatch | undefined): Redis {
  const timeout = networkTimeoutOf(redis) ?? resolveNetworkTimeout();
  // A reconnect whose SELECT the user's ACL refuses would fetch from database 0: closed instead.
  const blocking = closeOnRefusedSelect(
    watchSilence(
      redis.duplicate({
        ...blockingOptions(timeout, FETCH_TIMEOUT_SECONDS),
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
      }),
    ),
  );
  if (watch) watch.add(blocking);
  else blocking.on("error", () => {}); // reported by the fetch loop
  return blocking;
}

/** ioredis's socketTimeout: the flow went silent (not refused, not reset). */
const SILENCE = /Socket timeout/;

export class FetchLanes {
  /** One fetcher per lane, each on its own connection. */
  readonly fetchers: Fetcher[] = [];
  private readonly connections: Redis[] = [];
  /** Fetch loops waiting for room (a free slot, a lane's fetch to end, quiet). */
  private readonly waiters: Array<() => void> = [];
  /** The lanes with a fetch in flight. */
  private readonly inFlight = new Set<Fetcher>();
  private silenceHeard?: { redis: Redis; listener: (e: Error) => void };
  /** A fetch reply was lost: reclaim before the next fetch. */
  recoverNeeded = false;
  private reclaiming?: Promise<void> | undefined;
  /** Spare lanes waiting for the network to be slow (spareLanes). */
  private readonly spareWaiters: Array<() => void> = [];
  /** Moving average of the round trips of full fetches, in ms. */
  private roundTripMs = 0;
  /** Called the first time fetches turn slow (the manager opens its spare lanes). */
  onSlow?: () => void;
  private closed = false;

  constructor(private readonly logger: Logger) {}

  /** Opens `count` lanes, one connection each, with the fetcher `make` builds on it (lane 0 first); returns them. */
  async open(
    count: number,
    redis: Redis,
    watch: ConnectionWatch | undefined,
    make: (blocking: Redis, lane: number) => Fetcher | Promise<Fetcher>,
  ): Promise<Fetcher[]> {
    const added: Fetcher[] = [];
    this.listenForSilence(redis);
    // Spare lanes open while the worker runs: none once the lanes are closed (they would hold the process open).
    for (let lane = 0; lane < count && !this.closed; lane++) {
      const blocking = laneConnection(redis, watch);
      this.recoverOnReconnect(blocking);
      blocking.on("error", (e: Error) => this.onError(e));
      this.connections.push(blocking);
      added.push(await make(blocking, lane));
    }
    this.fetchers.push(...added);
    return added;
  }

  /** Basic fetch: `count` spare lanes, opened the first time fetches turn slow; `run` starts each one's loop. */
  spareOnSlow(
    count: number,
    redis: Redis,
    watch: ConnectionWatch | undefined,
    make: (blocking: Redis) => Fetcher,
    run: (f: Fetcher) => void,
  ): void {
    this.onSlow = () =>
      void this.open(count, redis, watch, make).then(
        (added) => added.forEach(run),
        (e: Error) => this.logger.warn("could not open spare fetch lanes", { error: e.message }),
      );
  }

  /**
   * A lane that reconnects may reach another server (a Sentinel failover)
   * holding an older copy of the working lists: jobs acknowledged since are
   * back in them, held by a live process, so recovery never returns them and
   * their locks (unique jobs) stay. Reclaim, as after a lost fetch reply.
   */
  private recoverOnReconnect(c: Redis): void {
    let connected = c.status === "ready";
    c.on("ready", () => {
      if (connected) {
        this.recoverNeeded = true;
        this.wake();
      }
      connected = true;
    });
  }

  /** How many lanes have a fetch in flight. */
  get fetching(): number {
    return this.inFlight.size;
  }

  /** `fetch` sends a fetch on its lane. */
  begin(fetch: Fetcher): void {
    this.inFlight.add(fetch);
  }

  /** `fetch`'s fetch ended (jobs, none, or an error). */
  end(fetch: Fetcher): void {
    this.inFlight.delete(fetch);
  }

  private listenForSilence(redis: Redis): void {
    if (this.silenceHeard) return;
    const listener = (e: Error) => this.onError(e);
    redis.on("error", listener);
    this.silenceHeard = { redis, listener };
  }

  private onError(e: Error): void {
    if (SILENCE.test(e.message)) this.dropIdle();
  }

  /**
   * One of the worker's connections went silent (its socket timed out): the
   * lanes share its path to Redis, so each lane with no fetch in flight takes
   * a new connection now. Found on its next fetch instead, each lane costs a
   * block plus a timeout, one after the other, since one lane's fetch holds
   * the free slots while the next waits (13 s to flow again after a 3 s
   * silence, with two lanes). A lane with a fetch in flight keeps its own
   * bound: dropping it could lose the job a basic fetch popped.
   */
  private dropIdle(): void {
    if (this.closed) return;
    this.fetchers.forEach((f, lane) => {
      const c = this.connections[lane];
      if (c?.status === "ready" && !this.inFlight.has(f)) c.disconnect(true);
    });
  }

  /** Until a slot frees, a lane's fetch ends, or quiet (wake). */
  wait(): Promise<void> {
    return new Promise<void>((r) => this.waiters.push(r));
  }

  wake(): void {
    for (const w of this.waiters.splice(0)) w();
    if (this.slow) for (const w of this.spareWaiters.splice(0)) w();
  }

  /** Wakes every loop, the spare lanes too (quiet, stop). */
  wakeAll(): void {
    this.wake();
    for (const w of this.spareWaiters.splice(0)) w();
  }

  /** True while full fetches take over SLOW_FETCH_MS on average. */
  get slow(): boolean {
    return this.roundTripMs > SLOW_FETCH_MS;
  }

  /** A spare lane's wait: until the network is slow (or wakeAll). */
  waitSpare(): Promise<void> {
    return new Promise<void>((r) => this.spareWaiters.push(r));
  }

  /** The round trip of a full fetch. */
  noteRoundTrip(ms: number): void {
    const was = this.slow;
    this.roundTripMs = this.roundTripMs === 0 ? ms : this.roundTripMs * 0.8 + ms * 0.2;
    if (this.slow && !was) {
      const first = this.onSlow;
      this.onSlow = undefined;
      first?.();
      this.wake();
    }
  }

  /**
   * After a lost fetch reply: jobs a fetch moved into our working lists whose
   * reply never came (those not `running`) go back to their queues. Run once
   * no lane has a fetch in flight (a lane's pending move must not be taken for
   * a stray); one lane does it for all, since they share the working lists.
   */
  async recover(running: () => ReadonlySet<string>): Promise<void> {
    if (this.reclaiming) return this.reclaiming;
    if (this.fetching > 0) {
      await this.wait();
      return;
    }
    this.reclaiming = (async () => {
      try {
        const n = (await this.fetchers[0]!.recover?.(running())) ?? 0;
        if (n > 0) this.logger.warn(`Reclaimed ${n} jobs whose fetch reply was lost`);
        this.recoverNeeded = false;
      } catch (e) {
        if (!isConnectionError(e))
          this.logger.warn("could not reclaim jobs after a lost fetch; retrying", { error: (e as Error).message });
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        this.reclaiming = undefined;
        this.wake();
      }
    })();
    return this.reclaiming;
  }

  /** Drops the lanes' connections at once (a blocked fetch fails; no reconnect). */
  disconnect(): void {
    this.closed = true;
    this.silenceHeard?.redis.off("error", this.silenceHeard.listener);
    for (const c of this.connections) c.disconnect();
  }

  /** Closes the connections, then the fetchers (one does it for all: they share the working lists). */
  async close(): Promise<void> {
    this.disconnect();
    await this.fetchers[0]?.close();
  }
}
