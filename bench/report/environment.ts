// What the figures were measured on.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { placement } from "../lib/cpu.js";

export interface Environment {
  date: string;
  cpu: string;
  cpus: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  redis: string;
  redisBenchmark?: string;
  placement: string;
  commit?: string;
}

function sh(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}

export function environment(redisBenchmark?: string): Environment {
  let cpu = cpus()[0]?.model ?? "unknown";
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpu;
  } catch {
    // not Linux
  }
  const commit = sh("git", ["rev-parse", "--short", "HEAD"]);
  const dirty = sh("git", ["status", "--porcelain", "--", "src"]);
  return {
    date: new Date().toISOString(),
    cpu,
    cpus: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    redis: sh("redis-server", ["--version"])?.replace(/^Redis server /, "") ?? "unknown",
    ...(redisBenchmark ? { redisBenchmark } : {}),
    placement: placement(),
    ...(commit ? { commit: `${commit}${dirty ? " (src/ modified)" : ""}` } : {}),
  };
}
