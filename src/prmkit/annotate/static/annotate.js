// prmkit annotate: the annotator's keyboard page. No framework, no build step.
//
// Every action is sent at once and shown as "saved" only when the server has committed it. Unsent
// actions wait in an outbox kept in localStorage and are replayed in order after a reload or a server
// restart, so nothing typed is lost. Text from the server is never parsed as HTML here.
(() => {
  "use strict";
  const root = document.getElementById("annotator");
  if (!root) return;
  const aid = root.dataset.assignment;
  const readonly = root.dataset.readonly === "true";
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const steps = Array.from(document.querySelectorAll("li.step"));
  const $ = (id) => document.getElementById(id);
  const outboxKey = `prmkit-outbox-${aid}`;
  const timeKey = `prmkit-time-${aid}`;
  let cursor = 0;
  let stepStart = performance.now();
  let spent = Number(localStorage.getItem(timeKey) || root.dataset.total || 0);
  let shownAt = performance.now();
  let sending = false;

  const rating = (li) => (li.dataset.rating === "" ? null : Number(li.dataset.rating));
  const stopFirst = () => ($("stop-first") ? $("stop-first").checked : false);
  const firstBad = () => steps.findIndex((li) => rating(li) === -1);

  function paint(li) {
    const r = rating(li);
    li.querySelectorAll("button.rate").forEach((b) => b.classList.toggle("on", r !== null && Number(b.dataset.value) === r));
    li.querySelector("button.flag").classList.toggle("on", li.dataset.flagged === "true");
    li.classList.toggle("current", steps.indexOf(li) === cursor && !readonly);
  }

  // Which steps are visible: all rated ones and the first unrated one; nothing after the first bad
  // step when "stop at the first bad step" is on.
  function reveal() {
    const bad = firstBad();
    let open = true;
    steps.forEach((li, i) => {
      const show = readonly || open;
      li.hidden = !show;
      if (rating(li) === null) open = false;
      if (stopFirst() && bad >= 0 && i >= bad) open = false;
      paint(li);
    });
    verdict();
  }

  // What submitting would mean (PRM800K's finish reasons), and whether it is allowed yet.
  function verdict() {
    if (readonly || !$("submit")) return null;
    const bad = firstBad();
    const allRated = steps.every((li) => rating(li) !== null);
    let reason = null;
    if (bad >= 0 && (stopFirst() || allRated)) reason = "found_error";
    else if (allRated) reason = "solution";
    $("submit").disabled = reason === null || pending().length > 0;
    $("verdict").textContent = reason ? `will submit as: ${reason === "found_error" ? `first error at step ${bad + 1}` : "solution, no error"}` : "";
    return reason;
  }

  function visible() { return steps.filter((li) => !li.hidden); }

  function move(to) {
    const vis = visible();
    if (!vis.length) return;
    cursor = Math.max(0, Math.min(to, steps.indexOf(vis[vis.length - 1])));
    stepStart = performance.now();
    steps.forEach(paint);
    steps[cursor].scrollIntoView({ block: "nearest" });
  }

  // --- the outbox: ordered, persistent, retried until the server says yes ---------------------
  function pending() { return JSON.parse(localStorage.getItem(outboxKey) || "[]"); }
  function savePending(list) { localStorage.setItem(outboxKey, JSON.stringify(list)); }
  function status(text) { if ($("status")) $("status").textContent = text; }

  function send(path, body, stepIndex) {
    const list = pending();
    list.push({ path, body, step: stepIndex });
    savePending(list);
    if (stepIndex !== undefined && steps[stepIndex]) steps[stepIndex].querySelector(".saved").textContent = "saving…";
    flush();
  }

  async function flush() {
    if (sending) return;
    sending = true;
    try {
      for (;;) {
        const list = pending();
        if (!list.length) break;
        const job = list[0];
        let res;
        try {
          res = await fetch(`/api/assignments/${aid}/${job.path}`, {
            method: "POST",
            headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
            body: JSON.stringify(job.body),
            credentials: "same-origin",
          });
        } catch (err) {
          status("server unreachable; your work is kept here and will be sent when it is back");
          setTimeout(flush, 1500);
          return;
        }
        if (res.status === 401) { status("session expired: log in again in another tab; nothing is lost"); setTimeout(flush, 3000); return; }
        const data = await res.json().catch(() => ({}));
        savePending(pending().slice(1));
        if (!res.ok) { status(`not saved: ${data.detail || res.status}`); continue; }
        status("");
        applyServer(job, data);
      }
    } finally {
      sending = false;
      verdict();
    }
  }

  function applyServer(job, data) {
    const st = job.path === "undo" ? data.undone : data;
    if (job.path === "finish") { localStorage.removeItem(timeKey); window.location.href = "/annotate"; return; }
    if (!st || st.step === undefined) return;
    const li = steps[st.step];
    if (job.path === "undo") {
      li.dataset.rating = st.rating === null ? "" : String(st.rating);
      li.dataset.flagged = st.flagged ? "true" : "false";
      li.querySelector("textarea").value = st.rewrite || "";
      reveal();
      move(st.step);
    }
    li.querySelector(".saved").textContent = "saved ✓";
    li.querySelector(".saved").dataset.ok = "true";
  }

  // --- actions --------------------------------------------------------------------------------
  function rate(value) {
    if (readonly) return;
    const li = steps[cursor];
    const timeMs = Math.round(performance.now() - stepStart);
    li.dataset.rating = String(value);
    send("rate", { step: cursor, rating: value, time_ms: timeMs }, cursor);
    reveal();
    if (value === -1 && stopFirst()) { move(cursor); return; }
    const next = steps.findIndex((s, i) => i > cursor && rating(s) === null);
    move(next >= 0 && !steps[next].hidden ? next : cursor);
  }

  function flag() {
    if (readonly) return;
    const li = steps[cursor];
    li.dataset.flagged = li.dataset.flagged === "true" ? "false" : "true";
    send("flag", { step: cursor, flagged: li.dataset.flagged === "true" }, cursor);
    paint(li);
  }

  function undo() {
    if (readonly) return;
    send("undo", {});
  }

  function finish(reason) {
    const note = $("reason") ? $("reason").value : "";
    tick();
    send("finish", { reason, note, total_time_ms: Math.round(spent) });
  }

  function tick() {
    const t = performance.now();
    if (!document.hidden) spent += t - shownAt;
    shownAt = t;
    localStorage.setItem(timeKey, String(Math.round(spent)));
    if ($("timer")) {
      const s = Math.floor(spent / 1000);
      $("timer").textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
    }
  }

  // An agent step's results (observations) are closed <details>: "o" opens or closes the current step's.
  function toggleResults() {
    const boxes = Array.from(steps[cursor].querySelectorAll("details.obs"));
    const open = !boxes.every((d) => d.open);
    boxes.forEach((d) => { d.open = open; });
  }

  const KEYS = { "1": -1, "-": -1, "2": 0, "0": 0, "3": 1, "+": 1, "=": 1 };
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    // a clicked checkbox ("stop at the first bad step") keeps the focus but takes no typing: keys still rate
    const inText = ev.target instanceof HTMLTextAreaElement || (ev.target instanceof HTMLInputElement && ev.target.type !== "checkbox");
    if (inText) { if (ev.key === "Escape") ev.target.blur(); return; }
    // Enter or space on a focused <summary> opens it; it must not also submit the item
    if (ev.target instanceof HTMLElement && ev.target.tagName === "SUMMARY" && (ev.key === "Enter" || ev.key === " ")) return;
    if (ev.key in KEYS) { rate(KEYS[ev.key]); ev.preventDefault(); }
    else if (ev.key === "j") move(cursor + 1);
    else if (ev.key === "k") move(cursor - 1);
    else if (ev.key === "f") flag();
    else if (ev.key === "u") undo();
    else if (ev.key === "o") toggleResults();
    else if (ev.key === "w" && !readonly) { steps[cursor].querySelector("textarea").focus(); ev.preventDefault(); }
    else if (ev.key === "Enter") { const r = verdict(); if (r && !$("submit").disabled) finish(r); }
  });

  steps.forEach((li, i) => {
    // blur after a click, so a later Enter submits instead of pressing the focused button again
    li.querySelectorAll("button.rate").forEach((b) => b.addEventListener("click", () => { b.blur(); cursor = i; rate(Number(b.dataset.value)); }));
    const fb = li.querySelector("button.flag");
    fb.addEventListener("click", () => { fb.blur(); cursor = i; flag(); });
    li.addEventListener("click", () => { if (cursor !== i) move(i); });
    const ta = li.querySelector("textarea");
    ta.addEventListener("change", () => { if (!readonly) send("rewrite", { step: i, text: ta.value }, i); });
  });
  // blur a clicked <summary> (results, tools) too: it opens all the same, and Enter then submits
  document.querySelectorAll("summary").forEach((sm) => sm.addEventListener("click", () => sm.blur()));
  if ($("submit")) $("submit").addEventListener("click", () => { const r = verdict(); if (r) finish(r); });
  if ($("bad-problem")) $("bad-problem").addEventListener("click", () => finish("bad_problem"));
  if ($("give-up")) $("give-up").addEventListener("click", () => finish("give_up"));
  if ($("stop-first")) $("stop-first").addEventListener("change", () => { reveal(); move(cursor); });
  document.addEventListener("visibilitychange", tick);

  reveal();
  const firstOpen = steps.findIndex((li) => rating(li) === null && !li.hidden);
  move(firstOpen >= 0 ? firstOpen : Math.max(0, visible().length - 1));
  if (!readonly) { setInterval(tick, 1000); flush(); }
})();
