// anvil serve: live updates and forms. Plain JavaScript, no build step, no inline script.
//
// Live: the server sends a `change` event whenever a debate (or the sessions) changed; the
// page fetches itself again and swaps the regions marked `data-live`, keeping what the person
// is typing and where the focus is. Forms marked `data-api` are sent as JSON with the token
// in the Authorization header.
"use strict";

(function () {
  const token = document.querySelector('meta[name="anvil-token"]')?.content || "";
  const body = document.body;
  const page = body.dataset.page;
  const debate = body.dataset.debate;
  const live = document.getElementById("live");

  function setLive(text, state) {
    if (live) live.textContent = text;
    body.dataset.live = state;
  }

  // ---- live regions ----
  // What the server last sent for each region: a region is replaced only when that changes,
  // never because the person opened a <details> or typed in it (which the DOM shows too).
  const served = new Map();
  for (const el of document.querySelectorAll("[data-live][id]")) served.set(el.id, el.innerHTML);
  let pending = null;
  let running = false;
  let again = false;

  async function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const fresh of doc.querySelectorAll("[data-live][id]")) {
        const old = document.getElementById(fresh.id);
        if (old && served.get(fresh.id) === fresh.innerHTML) continue;
        served.set(fresh.id, fresh.innerHTML);
        if (old) swap(old, fresh);
        else place(fresh);
      }
      // A region the page no longer has (nothing of it to show) goes.
      for (const gone of document.querySelectorAll("[data-live][id]")) {
        if (!doc.getElementById(gone.id)) {
          served.delete(gone.id);
          gone.remove();
        }
      }
      body.dataset.refreshed = String(Number(body.dataset.refreshed || 0) + 1);
    } catch (e) {
      setLive("update failed", "error");
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  }

  // Replaces `old` with `fresh`, carrying over typed values, open <details> and focus.
  function swap(old, fresh) {
    const active = document.activeElement;
    const focusId = active && old.contains(active) ? active.id : null;
    for (const field of old.querySelectorAll("textarea[id], input[id]:not([type=hidden])")) {
      const twin = fresh.querySelector("#" + CSS.escape(field.id));
      if (twin) twin.value = field.value;
    }
    for (const out of old.querySelectorAll("output[id]")) {
      const twin = fresh.querySelector("#" + CSS.escape(out.id));
      if (twin) twin.replaceChildren(...[...out.childNodes].map((n) => n.cloneNode(true)));
    }
    // <details> are matched by id: a region that gained a phase or a line since has more of
    // them, so their order says nothing. A loaded prompt is kept rather than fetched again.
    for (const d of old.querySelectorAll("details[open][id]")) {
      const twin = fresh.querySelector("#" + CSS.escape(d.id));
      if (!twin) continue;
      twin.open = true;
      const pre = d.querySelector("pre[data-loaded]");
      const twinPre = twin.querySelector("pre");
      if (pre && twinPre) {
        twinPre.textContent = pre.textContent;
        twinPre.dataset.loaded = "1";
      }
    }
    const node = document.importNode(fresh, true);
    old.replaceWith(node);
    wire(node);
    if (focusId) document.getElementById(focusId)?.focus();
  }

  // A region that was not on the page when it loaded (the positions, once a debater states
  // one): put where the fresh page has it, after the region before it, or first in its parent.
  function place(fresh) {
    let before = fresh.previousElementSibling;
    while (before && !(before.id && document.getElementById(before.id))) before = before.previousElementSibling;
    const node = document.importNode(fresh, true);
    if (before) {
      document.getElementById(before.id).after(node);
    } else if (fresh.parentElement?.id && document.getElementById(fresh.parentElement.id)) {
      document.getElementById(fresh.parentElement.id).prepend(node);
    } else {
      return;
    }
    wire(node);
  }

  function schedule() {
    clearTimeout(pending);
    pending = setTimeout(refresh, 60);
  }

  function concerns(change) {
    if (change.kind === "all") return true;
    if (page === "list") return change.kind === "debate";
    if (page === "sessions") return change.kind === "sessions";
    if (debate) return change.kind === "debate" && change.debate === debate;
    return false;
  }

  function connect() {
    const source = new EventSource("/api/events");
    source.addEventListener("hello", () => setLive("live", "connected"));
    source.addEventListener("change", (e) => {
      let change = {};
      try {
        change = JSON.parse(e.data);
      } catch (_) {
        change = { kind: "all" };
      }
      if (concerns(change)) schedule();
    });
    source.onerror = () => setLive("reconnecting…", "reconnecting");
  }

  // ---- forms ----

  // A live refresh may replace a region while a request is in flight: its answer goes to the
  // element now in the page under the same id, not to the detached one the request began with.
  function current(el) {
    return (el && el.id && document.getElementById(el.id)) || el;
  }

  async function submit(form, event) {
    event.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const status = form.querySelector("output");
    const data = formJson(form);
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    if (status) status.textContent = "sending…";
    try {
      const res = await fetch(form.dataset.api, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
        body: JSON.stringify(data),
      });
      const reply = await res.json().catch(() => ({}));
      const out = current(status);
      const now = (out && out.closest("form")) || form;
      if (!res.ok) {
        if (out) out.textContent = "Error: " + (reply.error || res.status);
        now.dataset.result = "error";
        return;
      }
      now.dataset.result = "ok";
      for (const f of new Set([form, now])) {
        for (const t of f.querySelectorAll("textarea, input:not([type=hidden])")) t.value = "";
      }
      if (form.hasAttribute("data-follow") && reply.url) {
        // A new debate: its page follows the run from here.
        if (out) out.textContent = reply.message || "started";
        location.assign(reply.url);
        return;
      }
      if (form.hasAttribute("data-branch")) {
        showBranch(out, reply);
      } else if (form.classList.contains("run") && out && reply.line) {
        out.replaceChildren(reply.message + " ");
      } else if (out) {
        out.textContent = reply.message || "done";
      }
      schedule();
    } catch (e) {
      const out = current(status);
      if (out) out.textContent = "Error: " + e;
      ((out && out.closest("form")) || form).dataset.result = "error";
    } finally {
      if (button) button.disabled = false;
      const twin = current(button);
      if (twin) twin.disabled = false;
    }
  }

  // A form's fields as the API's JSON: `seats.critic` goes into `seats`, a number field is a
  // number, and (with data-omit-empty) a field left empty is left out, so the server's defaults
  // hold. Fields a mode does not use are disabled, so they are not sent.
  function formJson(form) {
    const data = {};
    for (const [k, v] of new FormData(form).entries()) {
      const value = String(v);
      if (form.hasAttribute("data-omit-empty") && value.trim() === "") continue;
      const field = form.elements.namedItem(k);
      const typed = field && field.type === "number" && value !== "" ? Number(value) : value;
      const dot = k.indexOf(".");
      if (dot > 0) {
        const outer = k.slice(0, dot);
        data[outer] = data[outer] || {};
        data[outer][k.slice(dot + 1)] = typed;
      } else {
        data[k] = typed;
      }
    }
    if (data.name === "") delete data.name;
    return data;
  }

  // The parts of a form that only some modes use (`data-modes="analyst …"`) show, and are
  // sent, only in those modes.
  function wireModes(picker) {
    const form = picker.form;
    const show = () => {
      for (const part of form.querySelectorAll("[data-modes]")) {
        const on = part.dataset.modes.split(" ").includes(picker.value);
        part.hidden = !on;
        for (const f of part.querySelectorAll("input, select, textarea")) f.disabled = !on;
      }
    };
    picker.addEventListener("change", show);
    show();
  }

  // After a branch: where it is, and how to continue it.
  function showBranch(status, reply) {
    if (!status) return;
    status.textContent = "";
    const p = document.createElement("p");
    p.append("New line ");
    const a = document.createElement("a");
    a.href = "/debates/" + encodeURIComponent(reply.debate) + "?line=" + encodeURIComponent(reply.line);
    a.textContent = reply.line;
    p.append(a, " from " + reply.from + ". Continue it in Claude Code with:");
    const code = document.createElement("pre");
    code.className = "command";
    code.textContent = reply.continue;
    // Or let anvil run it headless, its progress shown on the new line's page. (A button,
    // not a form: it sits inside the branch form.)
    const run = document.createElement("button");
    run.type = "button";
    run.textContent = "Run headless";
    run.dataset.runApi = "/api/debates/" + encodeURIComponent(reply.debate) + "/lines/" +
      encodeURIComponent(reply.line) + "/run";
    const out = document.createElement("span");
    out.id = status.id + "-run";
    out.className = "run-out";
    out.setAttribute("role", "status");
    status.append(p, code, run, out);
    if (reply.note) {
      // What was redacted from the steering, said once.
      const note = document.createElement("p");
      note.textContent = "Note: " + reply.note;
      status.append(note);
    }
    wireRun(run);
  }

  // "Run headless" of a new branch: starts the run, then links to the line's page.
  function wireRun(button) {
    button.addEventListener("click", async () => {
      const started = button.nextElementSibling;
      button.disabled = true;
      started.textContent = " starting…";
      // The span and the button as they are in the page when the answer comes.
      const now = () => {
        const out = current(started);
        return [out, out.previousElementSibling || button];
      };
      try {
        const res = await fetch(button.dataset.runApi, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
          body: "{}",
        });
        const reply = await res.json().catch(() => ({}));
        const [out, twin] = now();
        if (!res.ok) {
          out.textContent = " Error: " + (reply.error || res.status);
          twin.disabled = false;
          return;
        }
        twin.disabled = true;
        out.replaceChildren(" " + reply.message + " ", lineLink(reply.line));
      } catch (e) {
        const [out, twin] = now();
        out.textContent = " Error: " + e;
        twin.disabled = false;
      }
    });
  }

  function lineLink(name) {
    const [d, l] = name.split("@");
    const a = document.createElement("a");
    a.href = "/debates/" + encodeURIComponent(d) + "?line=" + encodeURIComponent(l);
    a.textContent = "follow " + name;
    return a;
  }

  // Prompts are fetched when opened: they can be long.
  function wirePrompt(details) {
    details.addEventListener("toggle", async () => {
      const pre = details.querySelector("pre");
      if (!details.open || !pre || pre.dataset.loaded) return;
      pre.textContent = "loading…";
      try {
        const res = await fetch(details.dataset.promptUrl, { credentials: "same-origin" });
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        pre.textContent = doc.querySelector("pre.prompt")?.textContent ?? "(no prompt)";
        pre.dataset.loaded = "1";
      } catch (e) {
        pre.textContent = "could not load the prompt: " + e;
      }
    });
  }

  function wire(root) {
    for (const form of root.querySelectorAll("form[data-api]")) {
      form.addEventListener("submit", (e) => submit(form, e));
    }
    for (const d of root.querySelectorAll("details[data-prompt-url]")) wirePrompt(d);
    for (const b of root.querySelectorAll("button[data-run-api]")) wireRun(b);
    for (const picker of root.querySelectorAll("select[data-mode-picker]")) wireModes(picker);
  }

  wire(document);
  if (page !== "prompt") connect();
})();
