// npm's `prepare` hook. It runs on `npm install` from a git URL (npm then
// packs the clone, which needs dist/) and also on every `npm ci` in this
// repository, where a build is not needed: tests run from src/ with tsx and
// the interop setup builds dist/ itself. So `npm ci` skips it and stays fast.
// `npm pack` and `npm publish` build in `prepack`, which also leaves this
// script out of the packed package.json (scripts/pack-manifest.mjs).
import { spawnSync } from "node:child_process";

if (["ci", "pack", "publish"].includes(process.env.npm_command ?? "")) process.exit(0);
const r = spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: process.platform === "win32" });
process.exit(r.status ?? 1);
