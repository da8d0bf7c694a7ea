// `sidekiq-bridge web` from the real built binary: it binds 127.0.0.1 (a
// free port with --port 0), serves the pages under --base-path, refuses POSTs
// with --read-only, shows what real Ruby Sidekiq wrote, and stops on SIGTERM.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { signalChild } from "../harness/child-processes.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

const MAIN = join(REPO_ROOT, "dist", "assembly", "main.js");

describeEachSidekiq(
  "sidekiq-bridge web",
  (sk) => {
    it("serves the dashboard on 127.0.0.1 under --base-path, read-only, until SIGTERM", async () => {
      await sk.ruby(`Sidekiq::Client.push("class" => "CliWebJob", "queue" => "cli-web", "args" => [1])`);
      const child = spawn(
        process.execPath,
        [MAIN, "web", "--port", "0", "--redis", sk.url, "--base-path", "/sidekiq", "--read-only"],
        { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on("close", r));
      try {
        const url = await waitFor("the web command to print its URL", async () => /http:\/\/\S+/.exec(stdout)?.[0]);
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sidekiq\/$/);
        expect(stdout).toContain("read-only");
        const queues = await fetch(`${url}queues`);
        expect(queues.status).toBe(200);
        const body = await queues.text();
        expect(body).toContain("cli-web");
        expect(body).toContain('href="/sidekiq/busy"');
        expect(body).not.toContain('method="post"');
        const post = await fetch(`${url}queues/cli-web/clear`, { method: "POST", body: "" });
        expect(post.status).toBe(403);
        expect(await sk.redis.llen("queue:cli-web")).toBe(1);
        expect((await fetch(url.replace("/sidekiq/", "/queues"))).status).toBe(404);
      } finally {
        // To its pid: the exit code read is then the command's own on Deno too (signalChild).
        signalChild(child, "SIGTERM");
      }
      expect(await exited, stderr).toBe(0);
    });

    it("refuses a bad --port with exit code 2", async () => {
      const child = spawn(process.execPath, [MAIN, "web", "--port", "70000"], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      expect(await new Promise((r) => child.on("close", r))).toBe(2);
      expect(stderr).toContain("--port");
    });
  },
  (t) => t.dialect === 8,
);
