// wwho serve: the page. Sends the text to POST /api/tokenize (debounced) and draws every tokenizer's
// tokens, the cuts inside syllables and grapheme clusters, and the spans where tokenizers disagree.
// Plain JavaScript, no libraries, nothing fetched from anywhere but this server.
//
// Long texts stay responsive: tokens are drawn in blocks ("chunks") that the browser lays out only when
// they scroll into view (CSS content-visibility), the first screenful at once and the rest in short
// slices between which the page keeps answering; a newer text cancels the drawing of an older one.
"use strict";
(() => {
  const DEBOUNCE_MS = 150;
  const CHUNK = 250;     // tokens per block; a block also ends after a newline once it holds CHUNK / 2
  const FIRST = 600;     // tokens per row drawn before the page is shown
  const SLICE_MS = 12;   // longest stretch of drawing between two chances for the page to react
  const VISIBLE = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍" };
  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  const $ = (sel) => document.querySelector(sel);
  const state = { tokenizers: [], limits: null, data: null, sentText: "", seq: 0, drawing: 0, controller: null, timer: 0 };
  // What the page last drew and how long it took, for people and for the browser tests.
  const view = (window.wwhoView = {
    renderedText: null, rendering: false, requests: 0, sentAt: 0, serverMs: 0, roundTripMs: 0, firstMs: 0,
    renderMs: 0, tokens: 0,
  });

  const esc = (s) => s.replace(/[&<>"]/g, (c) => ESCAPES[c]);
  const visible = (s) => s.replace(/[ \t\n\r]/g, (c) => VISIBLE[c]);
  const codePoints = (s) => { let n = 0; for (const _ of s) n++; return n; };
  const plural = (n, word) => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;

  function setStatus(text, isError) {
    const el = $("#status");
    el.textContent = text;
    el.classList.toggle("error", !!isError);
  }

  async function start() {
    $("#fonts .close").addEventListener("click", dismissFonts);
    let info;
    try {
      info = await (await fetch("/api/tokenizers")).json();
    } catch (err) {
      setStatus("cannot reach the wwho server: " + err, true);
      return;
    }
    state.tokenizers = info.tokenizers;
    state.limits = info.limits;
    $("#choices").innerHTML = info.tokenizers.map((t, k) =>
      `<label title="${esc(t.kind)}, ${t.vocab_size.toLocaleString()} tokens">` +
      `<input type="checkbox" data-k="${k}" checked> ${esc(t.name)}</label>`).join("");
    $("#choices").addEventListener("change", () => schedule(0));
    $("#text").addEventListener("input", () => schedule(DEBOUNCE_MS));
    $("#show-ids").addEventListener("change", render);
    const marks = () => $("#results").classList.toggle("mark-disagree", $("#show-disagree").checked);
    $("#show-disagree").addEventListener("change", marks);
    marks();
    $("#results").addEventListener("mouseover", onTokenHover);
    $("#compare").addEventListener("mouseover", onSpanHover);
    for (const el of [$("#results"), $("#compare")]) el.addEventListener("mouseleave", () => { $("#tip").hidden = true; });
    schedule(0);
  }

  function schedule(delay) {
    clearTimeout(state.timer);
    state.timer = setTimeout(send, delay);
  }

  async function send() {
    const text = $("#text").value;
    checkFonts(text);
    const chosen = [...document.querySelectorAll("#choices input:checked")].map((el) => state.tokenizers[+el.dataset.k].name);
    const n = codePoints(text);
    if (state.limits && n > state.limits.max_chars) {
      setStatus(`${n.toLocaleString()} characters: the server takes at most ${state.limits.max_chars.toLocaleString()}`, true);
      return;
    }
    if (state.controller) state.controller.abort();  // the answer for an older text is no longer wanted
    const controller = (state.controller = new AbortController());
    const seq = ++state.seq;
    const t0 = (view.sentAt = performance.now());
    let res, data;
    try {
      res = await fetch("/api/tokenize", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text, tokenizers: chosen }), signal: controller.signal,
      });
      data = await res.json();
    } catch (err) {
      if (err.name !== "AbortError") setStatus("request failed: " + err, true);
      return;
    }
    if (seq !== state.seq) return;
    view.requests++;
    if (!res.ok) {
      // busy (429, 503): ask again for the same text when the server says to
      const retry = (res.status === 429 || res.status === 503) && +res.headers.get("Retry-After");
      setStatus((data.error || `HTTP ${res.status}`) + (retry ? ` (asking again in ${retry} s)` : ""), true);
      if (retry) schedule(retry * 1000);
      return;
    }
    view.roundTripMs = performance.now() - t0;
    view.serverMs = data.seconds * 1000;
    state.data = data;
    state.sentText = text;
    render();
  }

  // -- drawing ---------------------------------------------------------------------------------

  function render() {
    const data = state.data;
    if (!data) return;
    const drawing = ++state.drawing;
    view.rendering = true;
    const t0 = performance.now();
    const disagree = data.compare.filter((s) => !s.agree);
    const ids = $("#show-ids").checked;
    $("#results").innerHTML = data.results.map((r, k) => rowHead(r, k, ids)).join("");
    const jobs = [];
    data.results.forEach((r, k) => {
      if (!r.error) jobs.push(tokenJob(r, $(`#results .row[data-k="${k}"] .tokens`), disagree, ids));
    });
    const spans = compareJob(data, disagree);
    if (spans) jobs.push(spans);
    for (const job of jobs) while (!job.done && job.drawn < FIRST) job.step();
    void document.body.offsetHeight;  // include the first layout in the measured time
    view.firstMs = performance.now() - t0;
    const finish = () => {
      view.renderMs = performance.now() - t0;
      view.tokens = data.results.reduce((n, r) => n + (r.shown || 0), 0);
      view.renderedText = state.sentText;
      view.rendering = false;
      setStatus(`${plural(data.chars, "character")} · server ${view.serverMs.toFixed(0)} ms · ` +
                `drawn in ${view.firstMs.toFixed(0)} ms` +
                (view.renderMs - view.firstMs > 1 ? ` (all ${plural(view.tokens, "token")}: ${view.renderMs.toFixed(0)} ms)` : ""));
    };
    const more = () => {
      if (drawing !== state.drawing) return;  // a newer text is being drawn
      const until = performance.now() + SLICE_MS;
      for (const job of jobs) while (!job.done && performance.now() < until) job.step();
      if (jobs.some((job) => !job.done)) setTimeout(more, 0);
      else finish();
    };
    if (jobs.some((job) => !job.done)) {
      setStatus(`drawing ${plural(data.results.reduce((n, r) => n + (r.shown || 0), 0), "token")}…`);
      setTimeout(more, 0);
    } else {
      finish();
    }
  }

  function rowHead(r, k, ids) {
    const head = `<div class="head"><span class="name">${esc(r.tokenizer)}</span>` +
      `<span class="kind">${esc(r.kind)}${r.vocab_size ? `, ${r.vocab_size.toLocaleString()} tokens` : ""}</span>`;
    if (r.error) return `<div class="row" data-k="${k}">${head}</div><div class="error">${esc(r.error)}</div></div>`;
    const stats = `<span class="stats"><b>${r.count.toLocaleString()}</b> tokens · <b>${r.chars_per_token.toFixed(2)}</b> chars/token` +
      (r.aligned ? ` · <b class="${r.cuts_in_syllable ? "bad" : ""}">${r.cuts_in_syllable}</b> cuts inside syllables · ` +
                   `<b>${r.cuts_in_cluster}</b> inside grapheme clusters` : "") + "</span>";
    const prefix = r.prefix ? `<span class="kind">puts ${JSON.stringify(r.prefix)} before the text (in the first token's bytes, not drawn)</span>` : "";
    const cut = r.truncated ? `<span class="kind">showing the first ${r.shown.toLocaleString()} of ${r.count.toLocaleString()} tokens ` +
      `(the server sends ${state.limits ? state.limits.max_tokens.toLocaleString() : "a limited number of"} tokens per text, shared by the tokenizers)</span>` : "";
    const note = r.aligned ? "" :
      '<div class="unaligned">this tokenizer\'s tokens do not rebuild the text (an unknown-token id, or normalization): ' +
      "they are shown as its pieces, without cut marks, and left out of the comparison</div>";
    return `<div class="row" data-k="${k}">${head}${stats}${prefix}${cut}</div>${note}<div class="tokens${ids ? " ids" : ""}"></div></div>`;
  }

  // One row's tokens, CHUNK at a time: step() appends one block.
  function tokenJob(r, el, disagree, ids) {
    const T = r.tokens;
    const n = T.id.length;
    let i = 0, d = 0;
    const job = { drawn: 0, done: n === 0, step };
    function step() {
      const parts = [];
      const first = i;
      const stop = Math.min(n, i + CHUNK);
      for (; i < stop; i++) {
        let cls = "tok c" + (i % 8);
        if (T.cut_syllable[i]) cls += " cut-syl";
        else if (T.cut_cluster[i]) cls += " cut-gc";
        if (T.partial[i]) cls += " partial";
        if (T.lead[i]) cls += " lead";
        if (r.aligned && disagree.length) {
          // continuation bytes belong to the character before, which an earlier token shows
          const lo = T.lead[i] && T.start[i] > 0 ? T.start[i] - 1 : T.start[i];
          const hi = Math.max(T.end[i], lo + 1);
          while (d < disagree.length && disagree[d].end <= lo) d++;
          if (d < disagree.length && disagree[d].start < hi) cls += " dis";
        }
        const text = T.text[i];
        parts.push(`<span class="${cls}" data-i="${i}">${ids ? T.id[i] : esc(visible(text))}</span>`);
        if (!ids && text.includes("\n")) {
          parts.push("<br>");
          if (i + 1 - first >= CHUNK / 2) { i++; break; }
        }
      }
      el.insertAdjacentHTML("beforeend", `<div class="chunk">${parts.join("")}</div>`);
      job.drawn = i;
      job.done = i >= n;
    }
    return job;
  }

  function compareJob(data, disagree) {
    const aligned = data.results.filter((r) => !r.error && r.aligned);
    const section = $("#compare");
    const el = section.querySelector(".spans");
    el.innerHTML = "";
    section.hidden = aligned.length < 2;
    if (section.hidden) return null;
    const spans = data.compare;
    const compared = spans.length ? spans[spans.length - 1].end : 0;
    section.querySelector(".note").textContent = (disagree.length
      ? `(${plural(disagree.length, "span")} marked; hover one to see how each tokenizer cuts it)`
      : "(they agree everywhere)") +
      (compared < data.chars ? ` over the first ${plural(compared, "character")}, where the shortest row shown ends` : "");
    let k = 0;
    const job = { drawn: 0, done: spans.length === 0, step };
    function step() {
      const parts = [];
      const stop = Math.min(spans.length, k + CHUNK);
      for (; k < stop; k++) {
        const s = spans[k];
        parts.push(`<span class="span${s.agree ? "" : " dis"}" data-s="${k}">${esc(visible(s.text))}</span>`);
        if (s.text.includes("\n")) parts.push("<br>");
      }
      el.insertAdjacentHTML("beforeend", `<div class="chunk">${parts.join("")}</div>`);
      job.drawn = k * 4;  // spans are longer than tokens: fewer of them on the first screen
      job.done = k >= spans.length;
    }
    return job;
  }

  // -- hovering --------------------------------------------------------------------------------

  function showTip(event, text) {
    const tip = $("#tip");
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(event.clientX + 12, window.innerWidth - tip.offsetWidth - 8);
    const below = event.clientY + 18 + tip.offsetHeight <= window.innerHeight;
    tip.style.left = Math.max(4, x) + "px";
    tip.style.top = Math.max(4, below ? event.clientY + 18 : event.clientY - tip.offsetHeight - 8) + "px";
  }

  function describeChars(text) {
    const cps = [...text];
    if (!cps.length || cps.length > 12) return "";
    return cps.map((c) => "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")).join(" ");
  }

  function onTokenHover(event) {
    const el = event.target.closest(".tok");
    const row = event.target.closest(".row");
    if (!el || !row || !state.data) return;
    const T = state.data.results[+row.dataset.k].tokens;
    const i = +el.dataset.i;
    const hex = T.bytes[i].match(/../g) || [];
    const lines = [`id ${T.id[i]}`, `bytes ${hex.join(" ")} (${hex.length})`];
    if (T.text[i]) lines.push(`text ${JSON.stringify(T.text[i])}  ${describeChars(T.text[i])}`);
    if (T.lead[i]) lines.push(`starts with ${plural(T.lead[i], "byte")} of the character before (shown there)`);
    if (T.partial[i]) lines.push("not whole UTF-8 characters");
    if (T.cut_syllable[i]) lines.push("boundary after it: inside a syllable");
    else if (T.cut_cluster[i]) lines.push("boundary after it: inside a grapheme cluster");
    showTip(event, lines.join("\n"));
  }

  function piecesIn(r, start, end) {
    // the tokens overlapping [start, end): binary search for the first, then walk
    const T = r.tokens;
    let lo = 0, hi = T.id.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (T.end[mid] <= start) lo = mid + 1; else hi = mid; }
    const out = [];
    for (let i = lo; i < T.id.length && T.start[i] < end; i++) out.push(T.text[i] ? visible(T.text[i]) : "�");
    return out.join(" | ");
  }

  function onSpanHover(event) {
    const el = event.target.closest(".span.dis");
    if (!el || !state.data) return;
    const s = state.data.compare[+el.dataset.s];
    showTip(event, state.data.results.filter((r) => !r.error && r.aligned)
      .map((r) => `${r.tokenizer}: ${piecesIn(r, s.start, s.end)}`).join("\n"));
  }

  // -- fonts -----------------------------------------------------------------------------------
  // A script the browser has no font for is drawn as empty boxes ("tofu"): every letter looks the
  // same and no token can be read. For each script in the text (only those, and each once) the page
  // draws two of its letters on a canvas and compares them with a code point no font has (U+0378,
  // unassigned), drawn in the same font: the same pixels (Chromium draws the same .notdef box for
  // both), or both letters exactly as wide as it (for a browser that draws each missing code point's
  // own box, e.g. with its number in hex) = no font. Then a notice names the scripts and the fonts
  // that draw them. A browser whose canvas cannot be read gets no notice; the page works the same.
  const SCRIPTS = [
    // [name, \p{Script=...}, two letters of different widths, Noto font]
    ["Sinhala", "Sinhala", "\u0D9A\u0D85", "Noto Sans Sinhala"],
    ["Devanagari", "Devanagari", "\u0915\u0907", "Noto Sans Devanagari"],
    ["Bengali", "Bengali", "\u0995\u0987", "Noto Sans Bengali"],
    ["Gurmukhi", "Gurmukhi", "\u0A15\u0A07", "Noto Sans Gurmukhi"],
    ["Gujarati", "Gujarati", "\u0A95\u0A87", "Noto Sans Gujarati"],
    ["Odia", "Oriya", "\u0B15\u0B07", "Noto Sans Oriya"],
    ["Tamil", "Tamil", "\u0B95\u0B87", "Noto Sans Tamil"],
    ["Telugu", "Telugu", "\u0C15\u0C07", "Noto Sans Telugu"],
    ["Kannada", "Kannada", "\u0C95\u0C87", "Noto Sans Kannada"],
    ["Malayalam", "Malayalam", "\u0D15\u0D07", "Noto Sans Malayalam"],
  ].map(([name, script, letters, noto]) => ({ name, letters: [...letters], noto, re: new RegExp(`\\p{Script=${script}}`, "u") }));
  const NO_GLYPH = "\u0378";
  const fonts = (window.wwhoFonts = {
    drawable: new Map(),   // script name -> whether the browser has a font for it (checked once)
    dismissed: new Set(),  // scripts whose notice the user closed
    missing: [],           // the scripts of the text shown that cannot be drawn
    canDraw, missingIn, SCRIPTS,
  });
  let canvas = null;

  function family() {
    return getComputedStyle($("#text")).fontFamily || "sans-serif";
  }

  function ink(ctx, text) {
    ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height);
    ctx.fillText(text, 8, 44);
    return { width: ctx.measureText(text).width, pixels: ctx.getImageData(0, 0, ctx.canvas.width, ctx.canvas.height).data };
  }

  // Whether every one of `letters` (characters) is drawn with a glyph, in the page's text font.
  function canDraw(letters) {
    if (!canvas) {
      canvas = document.createElement("canvas");
      canvas.width = 96;
      canvas.height = 64;
    }
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    if (!ctx) return true;  // no canvas: nothing to tell
    ctx.font = `40px ${family()}`;
    ctx.fillStyle = "#000";
    const box = ink(ctx, NO_GLYPH);
    const drawn = [...letters].map((c) => ink(ctx, c));
    const same = (a) => a.width === box.width && a.pixels.every((v, k) => v === box.pixels[k]);
    if (drawn.some(same)) return false;
    return !(drawn.length > 1 && drawn.every((a) => a.width === box.width));
  }

  // The scripts of `text` the browser has no font for.
  function missingIn(text) {
    return SCRIPTS.filter((s) => {
      if (!s.re.test(text)) return false;
      if (!fonts.drawable.has(s.name)) fonts.drawable.set(s.name, canDraw(s.letters));
      return !fonts.drawable.get(s.name);
    });
  }

  function checkFonts(text) {
    let missing;
    try {
      missing = missingIn(text);
    } catch (err) {
      missing = [];  // a browser that cannot tell: say nothing rather than break the page
    }
    fonts.missing = missing.map((s) => s.name);
    const show = missing.filter((s) => !fonts.dismissed.has(s.name));
    const el = $("#fonts");
    el.hidden = show.length === 0;
    if (el.hidden) return;
    const names = show.map((s) => s.name);
    const list = (words) => words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
    el.querySelector(".scripts").textContent = list(names);
    el.querySelector(".noto").textContent = list(show.map((s) => s.noto));
    el.dataset.scripts = names.join(" ");
  }

  function dismissFonts() {
    for (const name of $("#fonts").dataset.scripts.split(" ")) fonts.dismissed.add(name);
    $("#fonts").hidden = true;
  }

  document.addEventListener("DOMContentLoaded", start);
})();
