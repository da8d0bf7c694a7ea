// Checked pushes against unchecked ones: the same Client pushes with and
// without a contract (mode "strict": arity, keywords and RBS types checked on
// every job), interleaved A/B in rounds in one process after a warm-up, on a
// fresh Redis. Single pushes keep 50 in flight; bulk pushes go 1,000 a call.
// Medians of the measured rounds, and contract-on over contract-off.
//
//   npx tsx bench/contract-push.ts                     # 20,000 pushes, 1 + 7 rounds
//   BENCH_PUSHES=10000 BENCH_ROUNDS=5 npx tsx bench/contract-push.ts
import { join } from "node:path";
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { ContractChecker } from "../src/core/contract/checker.js";
import { readContractFile } from "../src/tools/contract/document.js";
import { median } from "./measure/summary.js";

const PUSHES = Number(process.env.BENCH_PUSHES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const IN_FLIGHT = 50;
const contract = readContractFile(join(import.meta.dirname, "../test/contract/fixtures/shop.contract.json"));

type Variant = "off" | "on";

async function singles(client: Client): Promise<number> {
  // WelcomeEmailJob has RBS types: the check validates both arguments.
  const job = client.job("WelcomeEmailJob", { queue: "mailers", retry: 5 });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < PUSHES) await job.performAsync(next++, "welcome");
    }),
  );
  return PUSHES / ((performance.now() - t0) / 1000);
}

async function bulk(client: Client): Promise<number> {
  const job = client.job("WelcomeEmailJob", { queue: "mailers", retry: 5 });
  const args = Array.from({ length: PUSHES }, (_, i) => [i, "welcome"] as [number, string]);
  const t0 = performance.now();
  await job.performBulk(args);
  return PUSHES / ((performance.now() - t0) / 1000);
}

const server = await startRedis();
const url = `${server.url}/0`;
const redis = new Redis(url);
const clients: Record<Variant, Client> = {
  off: new Client({ redis: url, dialect: 8, validate: false }),
  on: new Client({ redis: url, dialect: 8, validate: false, contract: { contracts: contract, mode: "strict" } }),
};
const rates = {
  single: { off: [] as number[], on: [] as number[] },
  bulk: { off: [] as number[], on: [] as number[] },
};
try {
  for (let round = 0; round <= ROUNDS; round++) {
    // A/B then B/A, so neither variant always runs first.
    const order: Variant[] = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
    for (const kind of ["single", "bulk"] as const)
      for (const v of order) {
        const rate = kind === "single" ? await singles(clients[v]) : await bulk(clients[v]);
        await redis.del("queue:mailers"); // each run starts from the same empty queue
        const label = round === 0 ? "warm-up" : `round ${round}/${ROUNDS}`;
        console.error(`${label} ${kind} contract ${v}: ${Math.round(rate)} pushes/s`);
        if (round > 0) rates[kind][v].push(rate);
      }
  }
} finally {
  await Promise.all([clients.off.close(), clients.on.close()]);
  redis.disconnect();
  await server.stop();
}

// The check alone, without Redis: what it adds to each job, however loaded the machine.
const checker = new ContractChecker({ contracts: contract, mode: "strict" }, () => {});
const CHECKS = 1_000_000;
const item = { class: "WelcomeEmailJob", args: [0, "welcome"] };
const checkUs: number[] = [];
for (let r = 0; r < 5; r++) {
  const t0 = performance.now();
  for (let i = 0; i < CHECKS; i++) {
    item.args[0] = i;
    checker.checkPush(item);
  }
  checkUs.push(((performance.now() - t0) * 1000) / CHECKS);
}

console.log(
  `Node ${process.version}, ${PUSHES.toLocaleString()} pushes of WelcomeEmailJob (RBS-typed, mode "strict"), ${ROUNDS} interleaved rounds after a warm-up, medians`,
);
for (const kind of ["single", "bulk"] as const) {
  const off = median(rates[kind].off);
  const on = median(rates[kind].on);
  console.log(
    `${kind === "single" ? `single pushes, ${IN_FLIGHT} in flight` : "bulk pushes, 1,000 a round trip"}: off ${Math.round(off)}/s, on ${Math.round(on)}/s, on/off ${(on / off).toFixed(3)}`,
  );
  console.log(`  rounds off: ${rates[kind].off.map(Math.round).join(", ")}`);
  console.log(`  rounds on:  ${rates[kind].on.map(Math.round).join(", ")}`);
}
console.log(
  `the check alone (checkPush, strict, 2 typed arguments): ${median(checkUs).toFixed(3)} µs a job (5 runs of ${CHECKS.toLocaleString()}: ${checkUs.map((x) => x.toFixed(3)).join(", ")})`,
);
