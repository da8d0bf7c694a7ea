// How long a connection may stay silent. A NAT or firewall that drops an idle
// flow, or a failover behind a load balancer, leaves a socket that ioredis
// still calls ready: with no timeout a command on it waits forever. Sidekiq
// bounds every read and write (8.1.7: redis-client `timeout: 3`; the BRPOP
// gets its 2 s block on top), so every connection the bridge opens does too.
import type { Redis, RedisOptions } from "ioredis";

/** Sidekiq 7.3 and 8.x's `timeout: 3` (lib/sidekiq/redis_connection.rb): connect, read and write. */
export const DEFAULT_NETWORK_TIMEOUT_MS = 3000;

/** Seconds, as Sidekiq's `network_timeout`; the CLI's --network-timeout sets it for the whole process. */
export const NETWORK_TIMEOUT_ENV = "SIDEKIQ_BRIDGE_NETWORK_TIMEOUT";

/**
 * TCP keepalive's idle time, as redis-client (Sidekiq 7 and 8's driver) sets it (120 s). It finds a
 * dead peer on an idle connection; a connection with a command in flight is
 * bounded by the timeout long before. Node sets only the idle time: the
 * probes' interval and count stay the operating system's.
 */
export const KEEPALIVE_IDLE_MS = 120_000;

/** A network timeout that is not a positive number of seconds (or ms). */
export class NetworkTimeoutError extends Error {
  override name = "NetworkTimeoutError";
}

function checked(ms: number, what: string): number {
  if (!Number.isFinite(ms) || ms <= 0) throw new NetworkTimeoutError(`${what} must be a positive number, got ${ms}`);
  return ms;
}

/**
 * The timeout in ms: `explicit` (an option), else the environment's
 * SIDEKIQ_BRIDGE_NETWORK_TIMEOUT in seconds, else 3 s.
 */
export function resolveNetworkTimeout(explicit?: number, env = process.env): number {
  if (explicit !== undefined) return checked(explicit, "networkTimeoutMs");
  const raw = env[NETWORK_TIMEOUT_ENV];
  if (raw === undefined || raw === "") return DEFAULT_NETWORK_TIMEOUT_MS;
  return checked(Number(raw) * 1000, `${NETWORK_TIMEOUT_ENV} (seconds)`);
}

/**
 * ioredis options that bound a connection by `timeoutMs`. socketTimeout
 * destroys a socket that gives no byte for that long while a command waits
 * (ioredis then reconnects; on the connections we open, watchSilence keeps
 * that bound with one watchdog); connectTimeout bounds the TCP and TLS connect.
 * commandTimeout would reject the command but keep the dead socket.
 */
export function networkOptions(timeoutMs: number): RedisOptions {
  return { connectTimeout: timeoutMs, socketTimeout: timeoutMs, keepAlive: KEEPALIVE_IDLE_MS };
}

/**
 * For a connection whose commands block up to `blockSeconds` (a fetch's
 * BRPOP): the socket may stay silent for the block, plus the timeout, as
 * Sidekiq's `blocking_call(read_timeout + TIMEOUT, ...)`.
 */
export function blockingOptions(timeoutMs: number, blockSeconds: number): RedisOptions {
  return { ...networkOptions(timeoutMs), socketTimeout: blockSeconds * 1000 + timeoutMs };
}

/** The connection's own bound on silence, if it has one (an instance the user built may not). */
export function networkTimeoutOf(redis: Redis): number | undefined {
  return (redis.options as RedisOptions | undefined)?.socketTimeout ?? undefined;
}

const warned = new WeakSet<Redis>();

/**
 * Says once per instance (a worker and its own client share one) when an
 * ioredis instance passed in has nothing to bound its silence.
 */
export function warnIfUntimed(redis: Redis, warn: (message: string) => void): void {
  // A stand-in with no options (a test's) is not an ioredis connection to judge.
  if (redis.options === undefined || networkTimeoutOf(redis) !== undefined || warned.has(redis)) return;
  warned.add(redis);
  warn(
    "the ioredis instance passed in has no socketTimeout: on a connection the network drops silently, " +
      "its commands wait until TCP gives up (hours). Set socketTimeout (3000, as Sidekiq) and keepAlive on it, " +
      "or pass a URL or connection options (docs/OPERATING.md, Networks)",
  );
}

/** The ioredis internals the watchdog hooks into (ioredis 5). */
interface SocketInternals {
  stream?: NodeJS.EventEmitter & { destroy(error: Error): void };
  commandQueue: { length: number };
  /** ioredis calls it after each command it writes while its own timer is not set: never, once replaced. */
  setSocketTimeout(): void;
}

/**
 * Bounds a connection's silence by its socketTimeout with one watchdog
 * (SilenceWatchdog, below) in place of ioredis's timer per command: the same bound
 * and the same "Socket timeout" error, which destroys the socket (ioredis
 * then reconnects). The watchdog stops when the socket closes: ioredis 5's
 * own timer outlived its socket and, firing, destroyed the next one, a
 * healthy reconnected socket (a spurious "Socket timeout" after Redis
 * restarted). A connection without a socketTimeout is left as it is.
 */
export function watchSilence(redis: Redis): Redis {
  const ms = networkTimeoutOf(redis);
  if (ms === undefined) return redis;
  const r = redis as unknown as SocketInternals;
  const dog = new SilenceWatchdog(
    ms,
    () => r.commandQueue.length,
    () => r.stream?.destroy(new Error(`Socket timeout. Expecting data, but didn't receive any in ${ms}ms.`)),
  );
  const heard = () => dog.heard();
  let listened: SocketInternals["stream"];
  r.setSocketTimeout = () => {
    // Each reconnect brings a new socket: listen to it from its first command (its handshake).
    if (r.stream !== listened) (listened = r.stream)?.on("data", heard);
    dog.sent();
  };
  redis.on("close", () => dog.stop());
  return redis;
}

// One watchdog per connection bounds its silence. ioredis's own socketTimeout
// arms a timer and a 'data' listener for each command written while none is
// armed, and clears both at its reply: with one command in flight at a time
// (a worker at concurrency 1, a loop of single pushes) that is a timer and a
// listener per command. The watchdog instead notes the time when a command
// starts a wait and when a byte arrives, and keeps one timer that, when it
// fires, either finds the silence long enough or waits out the rest: a timer
// per bound's worth of time, not per command. The bound is the same: a
// connection is dropped once `ms` pass with a command waiting and no byte.

/**
 * The clock and timers of logic that keeps its own timer (the silence
 * watchdog, a connection's write deadlines); a test's are fake.
 */
export interface TimerClock {
  /** Monotonic milliseconds: a wall clock moved must neither look like silence nor stretch a bound. */
  now(): number;
  arm(fire: () => void, ms: number): unknown;
  disarm(timer: unknown): void;
  /** Whether the timer keeps the process alive. */
  hold(timer: unknown, yes: boolean): void;
}

export const realTimerClock: TimerClock = {
  now: () => performance.now(),
  arm: (fire, ms) => setTimeout(fire, ms),
  disarm: (timer) => clearTimeout(timer as NodeJS.Timeout),
  hold: (timer, yes) => void (yes ? (timer as NodeJS.Timeout).ref() : (timer as NodeJS.Timeout).unref()),
};

export class SilenceWatchdog {
  /** When the current wait (a command sent on an idle connection, or the last byte) began. */
  private since = 0;
  private timer: unknown = undefined;
  private readonly fire = () => this.check();

  /**
   * @param ms the bound on silence while a command waits
   * @param waiting how many commands have been written and not answered
   * @param drop called once the bound is reached (the owner destroys the socket)
   */
  constructor(
    readonly ms: number,
    private readonly waiting: () => number,
    private readonly drop: () => void,
    private readonly clock: TimerClock = realTimerClock,
  ) {}

  /** A command was written (it is already counted in `waiting`). */
  sent(): void {
    // The first command on an idle connection starts the wait; one sent
    // behind others does not move it (their reply, or its first byte, does).
    if (this.timer === undefined) {
      this.since = this.clock.now();
      this.timer = this.clock.arm(this.fire, this.ms);
    } else if (this.waiting() === 1) this.since = this.clock.now();
  }

  /** Bytes arrived: the connection is alive, whatever they answer. */
  heard(): void {
    this.since = this.clock.now();
  }

  /** The socket closed: its wait ends with it, and no timer may reach the next socket. */
  stop(): void {
    if (this.timer !== undefined) this.clock.disarm(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    this.timer = undefined;
    // Idle: nothing to bound until the next command.
    if (this.waiting() === 0) return;
    const left = this.since + this.ms - this.clock.now();
    if (left > 0) this.timer = this.clock.arm(this.fire, left);
    else this.drop();
  }
}
