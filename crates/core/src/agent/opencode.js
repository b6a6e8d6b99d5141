// anvil's plugin for OpenCode (anvil-managed: `anvil install --agent opencode` wrote it,
// `anvil uninstall --agent opencode` removes it).
//
// OpenCode has no Stop hook. When a session goes idle, this hands its last reply to anvil's
// Stop hook, `anvil-hook stop`, as another agent's hook would; when the hook answers with a
// `block`, its reason is sent as the session's next prompt. Nothing else is done here: the
// hook decides everything. It needs nothing but `anvil-hook` on the PATH OpenCode starts with;
// if that is missing or fails, the session goes on as if the plugin were not there (said once).

import { spawn } from "node:child_process";

// OpenCode has no cap on continuations in a row: this one ends a streak this long.
const MOST_IN_A_ROW = 200;
// The longest the hook may take (seats it plays included), in milliseconds.
const HOOK_TIMEOUT = 30 * 60 * 1000;

export const AnvilPlugin = async ({ client, directory }) => {
  // Per session: the prompt this plugin sent last, and how many it sent in a row.
  const sent = new Map();
  let warned = false;
  const tell = async (message, variant) => {
    await client.tui?.showToast?.({ body: { message, variant } }).catch(() => {});
    await client.app?.log?.({ body: { service: "anvil", level: "info", message } }).catch(() => {});
  };
  const warn = async (message) => {
    if (!warned) {
      warned = true;
      await tell(`anvil: ${message}`, "warning");
    }
  };

  return {
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const id = event.properties.sessionID;
      try {
        const { data: messages } = await client.session.messages({ path: { id } });
        const reply = messages?.at(-1);
        if (reply?.info.role !== "assistant") return;
        const asked = messages.find((m) => m.info.id === reply.info.parentID);
        const mine = sent.get(id);
        const continued = mine !== undefined && text(asked) === mine.prompt;
        const session = await client.session.get({ path: { id } }).catch(() => ({}));
        const answer = await hook({
          hook_event_name: "session.idle",
          session_id: id,
          cwd: directory,
          last_assistant_message: text(reply),
          prompt: [text(asked), ...toolOutputs(messages, asked)].join("\n"),
          stop_hook_active: continued,
          model: `${reply.info.providerID}/${reply.info.modelID}`,
          tokens: reply.info.tokens,
          version: session.data?.version,
        });
        const streak = continued ? mine.streak + 1 : 1;
        if (answer?.decision === "block" && streak <= MOST_IN_A_ROW) {
          sent.set(id, { prompt: answer.reason, streak });
          await client.session.promptAsync({
            path: { id },
            body: { parts: [{ type: "text", text: answer.reason }] },
          });
        } else {
          sent.delete(id);
          if (answer?.systemMessage) await tell(answer.systemMessage, "info");
        }
      } catch (error) {
        await warn(`the debate hook did not run (${error?.message ?? error}); the session goes on without it`);
      }
    },
  };
};

// The text parts of a message, joined.
function text(message) {
  return (message?.parts ?? [])
    .filter((part) => part.type === "text" && !part.synthetic)
    .map((part) => part.text)
    .join("");
}

// What the tools returned since `asked`: `anvil start`, run by the /anvil command, prints the
// prompt there.
function toolOutputs(messages, asked) {
  const since = messages.slice(messages.indexOf(asked) + 1);
  return since.flatMap((m) => m.parts ?? []).flatMap((part) => {
    const output = part.type === "tool" ? part.state?.output : undefined;
    return typeof output === "string" ? [output] : [];
  });
}

// Runs `anvil-hook stop` with `input` on stdin; its answer, or `undefined` when it says
// nothing. Rejects when it cannot run or fails.
function hook(input) {
  return new Promise((resolve, reject) => {
    const child = spawn("anvil-hook", ["stop"], { cwd: input.cwd, stdio: ["pipe", "pipe", "ignore"] });
    const timer = setTimeout(() => child.kill(), HOOK_TIMEOUT);
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`anvil-hook exited with ${code}`));
      try {
        resolve(out.trim() ? JSON.parse(out) : undefined);
      } catch (error) {
        reject(error);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}
