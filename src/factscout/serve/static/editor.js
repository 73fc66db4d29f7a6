// factscout query editor: applies the rewriting edit actions through POST /v1/rewrite and shows
// how the results (and the metric, when qrels are loaded) change. Every piece of data is put
// into the page with textContent / createElement, never as HTML.
"use strict";

(function () {
  const root = document.getElementById("editor");
  if (!root) return;
  const original = root.dataset.query || "";
  const claimId = root.dataset.claimId || null;
  const el = (id) => document.getElementById(id);
  const KIND = { swap_synonym: "⇄ swap", add_synonym: "+ add", present_simple: "→ present", remove: "✕ remove" };
  let history = []; // [{query, edit, metric}]
  let previousHits = null;

  function make(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  async function call(body) {
    const response = await fetch("/v1/rewrite", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || "request failed (" + response.status + ")");
    return data;
  }

  function metricText(metric) {
    return metric ? metric.measure + " " + metric.value.toFixed(3) : "";
  }

  function render(data, suggest) {
    el("editor-query").textContent = data.query;
    const tokens = el("editor-tokens");
    clear(tokens);
    for (const token of data.tokens) {
      const box = make("div", "token");
      box.dataset.position = token.position;
      box.appendChild(make("span", "token-text", token.text));
      const actions = make("div", "token-actions");
      for (const edit of token.edits) {
        const button = make("button", "edit " + edit.kind, KIND[edit.kind] || edit.kind);
        button.type = "button";
        button.title = edit.description + " (action " + edit.action + ")";
        button.dataset.action = edit.action;
        button.addEventListener("click", () => apply(edit.action));
        actions.appendChild(button);
      }
      box.appendChild(actions);
      tokens.appendChild(box);
    }
    const list = el("editor-history");
    clear(list);
    for (const step of history) {
      const item = make("li", null, step.edit ? step.edit.description : "original query");
      if (step.metric) item.appendChild(make("span", "metric-value", " " + metricText(step.metric)));
      list.appendChild(item);
    }
    const before = history.length > 1 ? history[history.length - 2].metric : null;
    let line = data.metric ? metricText(data.metric) : "no qrels for this claim: no metric";
    if (data.metric && before) {
      const delta = data.metric.value - before.value;
      line += " (" + (delta >= 0 ? "+" : "") + delta.toFixed(3) + ")";
    }
    el("editor-metric").textContent = line;
    const hits = el("editor-hits");
    clear(hits);
    const seen = new Set(previousHits || []);
    for (const hit of data.hits) {
      const item = make("li", "hit" + (hit.relevant ? " relevant" : ""));
      item.appendChild(make("span", "hit-title", hit.title || hit.doc_id));
      item.appendChild(make("span", "hit-meta", " " + hit.passage_id + " · " + hit.score.toFixed(2)));
      if (previousHits && !seen.has(hit.passage_id)) item.appendChild(make("span", "badge new", "new"));
      if (hit.relevant) item.appendChild(make("span", "badge rel", "relevant"));
      hits.appendChild(item);
    }
    previousHits = data.hits.map((h) => h.passage_id);
    if (suggest) renderSuggestion(data.suggestion, data.policy);
  }

  function renderSuggestion(trace, policy) {
    const list = el("editor-suggestion");
    if (!list) return; // no shipped policy fits the index: the page says so, and nothing is suggested
    clear(list);
    el("suggest-policy").textContent = policy;
    if (!trace) return;
    if (!trace.steps.length) list.appendChild(make("li", "muted", "no edit suggested"));
    for (const step of trace.steps) {
      const item = make("li", "suggested-step", step.text);
      if (step.reward !== null && step.reward !== undefined) {
        item.appendChild(make("span", "metric-value", " → " + trace.measure + " " + step.reward.toFixed(3)));
      }
      item.appendChild(make("div", "suggested-query", step.query));
      list.appendChild(item);
    }
  }

  async function load(query, action, suggest) {
    el("editor-status").textContent = "searching…";
    try {
      const body = { query: query, k: 5, suggest: suggest && el("editor-suggestion") !== null };
      if (action !== null) body.action = action;
      if (claimId) body.claim_id = claimId;
      const data = await call(body);
      history.push({ query: data.query, edit: data.edit, metric: data.metric });
      render(data, suggest);
      el("editor-status").textContent = "";
      root.dataset.ready = "true";
    } catch (error) {
      el("editor-status").textContent = error.message;
    }
  }

  function apply(action) {
    const current = history.length ? history[history.length - 1].query : original;
    load(current, action, false);
  }

  el("editor-reset").addEventListener("click", () => {
    history = [];
    previousHits = null;
    load(original, null, true);
  });
  load(original, null, true);
})();
