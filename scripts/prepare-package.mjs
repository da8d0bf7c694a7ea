// npm's `prepare` hook. It runs on `npm install` from a git URL (npm then
// packs the clone, which needs dist/) and also on every `npm ci` in this
// repository, where a build is not needed: tests run from src/ with tsx and
// the interop setup builds dist/ itself. So `npm ci` skips it and stays fast.
import { spawnSync } from "node:child_process";

if (process.env.npm_command === "ci") process.exit(0);
const r = spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: process.platform === "win32" });
process.exit(r.status ?? 1);
