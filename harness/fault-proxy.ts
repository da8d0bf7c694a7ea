// A network between the processes and Redis that fails as production networks
// do, on loopback only: a TCP proxy on 127.0.0.1 that forwards to a Redis on
// 127.0.0.1 and, when told, blackholes the flows it carries (a NAT or
// firewall that forgets them: no FIN, no RST, data goes nowhere), partitions
// (new flows too, until healed), adds latency each way, resets a flow in the
// middle of a reply, or cuts a reply in the middle of a bulk string.
import net from "node:net";

const LOOPBACK = "127.0.0.1";

interface Flow {
  client: net.Socket;
  upstream: net.Socket;
  /** Dropped: nothing more passes either way, and neither side is told. */
  silent: boolean;
}

export interface FaultProxy {
  /** Where the processes connect: redis://127.0.0.1:<port>. */
  readonly port: number;
  readonly url: string;
  /** Flows opened through the proxy so far (a reconnect adds one). */
  readonly connections: number;
  /** Flows open now, not silenced. */
  readonly live: number;
  /** Existing flows go silent for good; new ones pass. */
  blackhole(): void;
  /** Existing and new flows go silent until heal(). */
  partition(): void;
  /** New flows pass again; flows silenced before stay silent, as a real network's would. */
  heal(): void;
  /** Each chunk waits `ms` before it is passed on, each way (0: none). */
  latency(ms: number): void;
  /** Every flow open now is reset (RST), silent ones too: a failover's load balancer dropping its table. */
  resetAll(): void;
  /** The next reply (holding `match`, if given) is passed on in part, then its flow is reset (RST). */
  resetMidReply(match?: string): void;
  /** The next reply (holding `match`) is passed on up to the middle of its first bulk string, then its flow goes silent. */
  cutMidBulk(match?: string): void;
  close(): Promise<void>;
}

/** Starts a proxy to the Redis at 127.0.0.1:`targetPort`. Both ends are loopback. */
export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const flows = new Set<Flow>();
  let partitioned = false;
  let delayMs = 0;
  let opened = 0;
  let replyFault: { kind: "reset" | "cut"; match: string | undefined } | undefined;

  const pass = (flow: Flow, to: net.Socket, chunk: Buffer) => {
    if (flow.silent) return;
    const write = () => {
      if (!flow.silent && !to.destroyed) to.write(chunk);
    };
    if (delayMs > 0) setTimeout(write, delayMs);
    else write();
  };

  const onReply = (flow: Flow, chunk: Buffer) => {
    if (flow.silent) return;
    const fault = replyFault;
    if (fault === undefined || chunk.length < 2 || (fault.match !== undefined && !chunk.includes(fault.match)))
      return pass(flow, flow.client, chunk);
    replyFault = undefined;
    if (fault.kind === "reset") {
      flow.client.write(chunk.subarray(0, Math.floor(chunk.length / 2)));
      flow.silent = true;
      flow.client.resetAndDestroy();
      flow.upstream.destroy();
      return;
    }
    // Up to the middle of the first bulk string's bytes ("$<len>\r\n<bytes>").
    const at = chunk.indexOf("$");
    const body = at < 0 ? -1 : chunk.indexOf("\r\n", at);
    const cut = body < 0 ? Math.floor(chunk.length / 2) : body + 2 + Math.floor((chunk.length - body - 2) / 2);
    flow.client.write(chunk.subarray(0, Math.max(1, cut)));
    flow.silent = true;
  };

  const server = net.createServer((client) => {
    opened++;
    const upstream = net.connect({ host: LOOPBACK, port: targetPort });
    const flow: Flow = { client, upstream, silent: partitioned };
    flows.add(flow);
    client.on("data", (c: Buffer) => pass(flow, upstream, c));
    upstream.on("data", (c: Buffer) => onReply(flow, c));
    const end = () => {
      flows.delete(flow);
      client.destroy();
      upstream.destroy();
    };
    // A silent flow tells neither side that the other went away: Redis keeps
    // its end (a blocked BRPOP there may still take a job) until close().
    client.on("close", () => (flow.silent ? undefined : end()));
    upstream.on("close", () => (flow.silent ? undefined : end()));
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, resolve);
  });
  const port = (server.address() as net.AddressInfo).port;

  const silenceAll = () => {
    for (const f of flows) f.silent = true;
  };
  return {
    port,
    url: `redis://${LOOPBACK}:${port}`,
    get connections() {
      return opened;
    },
    get live() {
      return [...flows].filter((f) => !f.silent && !f.client.destroyed).length;
    },
    blackhole: silenceAll,
    partition() {
      partitioned = true;
      silenceAll();
    },
    heal() {
      partitioned = false;
    },
    latency(ms: number) {
      delayMs = ms;
    },
    resetAll() {
      for (const f of flows) {
        f.silent = true;
        f.client.resetAndDestroy();
        f.upstream.destroy();
      }
      flows.clear();
    },
    resetMidReply(match?: string) {
      replyFault = { kind: "reset", match };
    },
    cutMidBulk(match?: string) {
      replyFault = { kind: "cut", match };
    },
    async close() {
      for (const f of flows) {
        f.client.destroy();
        f.upstream.destroy();
      }
      flows.clear();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
