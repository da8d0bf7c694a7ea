// The Node processes under test run as plain `node` on a bundle (no TypeScript
// loader in them, so their RSS and CPU are the library's own). esbuild comes
// with tsx; the bundles go to node_modules/.cache so bare imports (ioredis,
// bullmq) resolve to this repository's node_modules.
import { createHash } from "node:crypto";
import { build, type Plugin } from "esbuild";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_ROOT = resolve(BENCH_DIR, "..");
const OUT_DIR = join(REPO_ROOT, "node_modules/.cache/sidekiq-bridge-bench");

const built = new Map<string, string>();

/**
 * BENCH_BRIDGE_SRC=/some/checkout/src benchmarks another copy of src/ (a
 * branch, an experiment) in the Node processes under test, without touching
 * this tree. The harness's own staging keeps using this tree's client.
 */
export const ALT_SRC = process.env.BENCH_BRIDGE_SRC ? resolve(process.env.BENCH_BRIDGE_SRC) : undefined;
/** BENCH_BRIDGE_COMPARE=/some/checkout/src adds a variant built from that copy, measured beside this tree's. */
export const COMPARE_SRC = process.env.BENCH_BRIDGE_COMPARE ? resolve(process.env.BENCH_BRIDGE_COMPARE) : undefined;

function altSrc(dir: string): Plugin {
  const ours = join(REPO_ROOT, "src");
  return {
    name: "bench-alt-src",
    setup(b) {
      b.onResolve({ filter: /\/src\// }, (args) => {
        if (!args.resolveDir.startsWith(BENCH_DIR)) return undefined;
        const target = resolve(args.resolveDir, args.path);
        if (!target.startsWith(`${ours}/`)) return undefined;
        const swapped = join(dir, relative(ours, target)).replace(/\.js$/, ".ts");
        if (!existsSync(swapped)) throw new Error(`${dir}: ${swapped} does not exist`);
        return { path: swapped };
      });
    },
  };
}

/** Bundles bench/<entry>.ts (once per harness run), with src/ from `src` if given; returns the .mjs path. */
export async function bundle(entry: string, src: string | undefined = ALT_SRC): Promise<string> {
  const key = `${entry}|${src ?? ""}`;
  const done = built.get(key);
  if (done) return done;
  mkdirSync(OUT_DIR, { recursive: true });
  const tag = src ? `-${createHash("sha256").update(src).digest("hex").slice(0, 8)}` : "";
  const outfile = join(OUT_DIR, `${entry.replace(/[/\\]/g, "-")}${tag}.mjs`);
  await build({
    entryPoints: [join(BENCH_DIR, `${entry}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    sourcemap: false,
    logLevel: "error",
    plugins: src ? [altSrc(src)] : [],
  });
  built.set(key, outfile);
  return outfile;
}
