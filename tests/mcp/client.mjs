#!/usr/bin/env node
// MCP interop test client built on the official TypeScript SDK, so that our Rust
// server is checked against the reference client implementation.
//
//   node client.mjs stdio <command> [args...]
//   node client.mjs http <url>
//
// stdin:  JSON array of calls, e.g. [{"name": "echo", "arguments": {"message": "hi"}}]
// stdout: one JSON object {"serverInfo", "tools", "calls"}; exit 0.
// On any failure other than a per-call protocol error: message on stderr, exit 1.
//
// MCP_CLIENT_TIMEOUT_MS (default 20000) bounds the whole run.
// MCP_CLIENT_ELICIT=accept|decline|cancel declares the elicitation capability and answers every
// elicitation request so; the messages asked are reported as "elicitations". Unset: no capability.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = Number(process.env.MCP_CLIENT_TIMEOUT_MS ?? 20_000);
const USAGE = "usage: node client.mjs stdio <command> [args...] | node client.mjs http <url>";

function fail(message) {
  console.error(`client.mjs: ${message}`);
  process.exit(1);
}

function makeTransport(argv) {
  const [mode, ...rest] = argv;
  if (mode === "stdio" && rest.length >= 1) {
    const [command, ...args] = rest;
    // The SDK passes only a minimal whitelist of env vars by default; tests want
    // the server to see ours (RUST_LOG, config paths, ...). Server stderr is
    // passed through so its diagnostics show up in test logs.
    return new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  }
  if (mode === "http" && rest.length === 1) {
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  fail(USAGE);
}

async function readCalls() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  // Empty stdin means "no calls", handy for just listing tools.
  const calls = text.trim() === "" ? [] : JSON.parse(text);
  if (!Array.isArray(calls) || !calls.every((c) => c && typeof c.name === "string")) {
    throw new Error('stdin must be a JSON array of {"name": string, "arguments"?: object}');
  }
  return calls;
}

// Only protocol-level errors belong in the output: they are what the test
// compares. McpError covers both JSON-RPC error responses from the server and
// errors the SDK raises itself for a call (e.g. structuredContent not matching
// the tool's outputSchema), and both carry a numeric JSON-RPC code.
function toCallError(err) {
  if (!(err instanceof McpError)) throw err;
  // McpError prefixes its message with "MCP error <code>: "; strip that so the
  // test sees the message as the server (or SDK check) wrote it.
  const message = err.message.replace(/^MCP error -?\d+: /, "");
  const error = { code: err.code, message };
  if (err.data !== undefined) error.data = err.data;
  return error;
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function main() {
  const transport = makeTransport(process.argv.slice(2));

  // A hung server (or a caller that never closes stdin) must fail the test,
  // not hang it. The stdio child is killed outright: the SDK's graceful close
  // takes seconds, and a child that ignores stdin EOF would otherwise outlive us.
  const watchdog = setTimeout(() => {
    console.error(`client.mjs: timed out after ${TIMEOUT_MS} ms`);
    if (transport instanceof StdioClientTransport && transport.pid != null) {
      try {
        process.kill(transport.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    process.exit(1);
  }, TIMEOUT_MS);

  const calls = await readCalls();
  const elicit = process.env.MCP_CLIENT_ELICIT;
  const client = new Client(
    { name: "agent-core-mcp-interop", version: "0.1.0" },
    elicit ? { capabilities: { elicitation: {} } } : {},
  );
  const elicitations = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicitations.push(request.params.message);
      return elicit === "accept" ? { action: "accept", content: {} } : { action: elicit };
    });
  }
  await client.connect(transport);

  const serverInfo = client.getServerVersion();
  // listTools must run before any callTool: it is what primes the SDK's
  // outputSchema validators, so structuredContent checks apply to the calls.
  const tools = await listAllTools(client);

  const results = [];
  for (const { name, arguments: args } of calls) {
    try {
      const result = await client.callTool({ name, arguments: args ?? {} });
      results.push({ name, result });
    } catch (err) {
      results.push({ name, error: toCallError(err) });
    }
  }

  // Ending the HTTP session explicitly lets the server free it now instead of
  // keeping it around; a server that does not support DELETE is not an error.
  if (transport instanceof StreamableHTTPClientTransport) {
    try {
      await transport.terminateSession();
    } catch (err) {
      console.error(`client.mjs: warning: session termination failed: ${err.message}`);
    }
  }
  await client.close();
  clearTimeout(watchdog);

  // Exit only once stdout is flushed: the JSON is the whole point of the run.
  process.stdout.write(
    JSON.stringify({ serverInfo, tools, calls: results, elicitations }) + "\n",
    () => process.exit(0),
  );
}

main().catch((err) => fail(err?.stack ?? String(err)));
