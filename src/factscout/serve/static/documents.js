// factscout page, "paste a text" mode: a switch between the claim form and the document form (shown
// only with this script: the document form needs it), a document posted to POST /v1/documents, its job
// polled (GET /v1/documents/{id}) with the progress shown ("checking… 2/5"), then its page opened
// (/documents/{id}): the text with its check-worthy sentences highlighted in place, each checked one
// linked to its verdict and evidence, drawn by the server like every report. On that page, while the
// job runs, the progress is polled and the page reloaded when it ends. Text is only ever put into the
// page with textContent.
"use strict";

(function () {
  const POLL_MS = 500;

  function say(element, text, isError) {
    element.hidden = false;
    element.textContent = text;
    element.className = isError ? "error" : "muted";
    element.setAttribute("role", isError ? "alert" : "status");
  }

  function progressText(job) {
    if (job.status === "queued") return "queued… " + job.progress.checked + "/" + job.progress.total + " sentences checked";
    return "checking… " + job.progress.checked + "/" + job.progress.total + " sentences checked";
  }

  // poll a document job until it ends; onEnd(job) then
  async function poll(jobId, element, onEnd) {
    for (;;) {
      const response = await fetch("/v1/documents/" + encodeURIComponent(jobId), { headers: { Accept: "application/json" } });
      const job = await response.json();
      if (!response.ok) throw new Error(job.error || "request failed (" + response.status + ")");
      if (job.status === "done" || job.status === "failed") {
        if (job.error) throw new Error(job.error);
        onEnd(job);
        return;
      }
      say(element, progressText(job));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  // the document's page while its job runs: poll, then reload to show the report
  const pending = document.getElementById("document-progress");
  if (pending && pending.dataset.job) {
    poll(pending.dataset.job, pending, () => window.location.reload()).catch((error) => say(pending, error.message, true));
    return;
  }

  // the main page: the mode switch and the document form
  const mode = document.getElementById("mode");
  const claimForm = document.getElementById("claim-form");
  const form = document.getElementById("document-form");
  const status = document.getElementById("document-status");
  if (!mode || !claimForm || !form || !status) return;

  function show(which) {
    const documentMode = which === "document";
    form.hidden = !documentMode;
    claimForm.hidden = documentMode;
    for (const radio of mode.querySelectorAll("input[name=mode]")) radio.checked = radio.value === which;
  }

  mode.hidden = false;
  for (const radio of mode.querySelectorAll("input[name=mode]")) {
    radio.addEventListener("change", () => {
      if (radio.checked) show(radio.value);
    });
  }
  for (const example of document.querySelectorAll("a.example")) {
    example.addEventListener("click", () => show("claim")); // an example is a claim
  }
  if (new URLSearchParams(window.location.search).get("mode") === "document") show("document");

  async function submit() {
    const body = {
      text: form.elements.text.value,
      format: form.elements.format.value,
      top: Number(form.elements.top.value) || 5,
    };
    if (form.elements.date.value) body.date = form.elements.date.value;
    const button = document.getElementById("check-document");
    button.disabled = true;
    say(status, "sending… (its sentences are scored first)");
    try {
      const response = await fetch("/v1/documents", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
      });
      const job = await response.json();
      if (response.status !== 202) throw new Error(job.error || "request failed (" + response.status + ")");
      if (job.error) throw new Error(job.error);
      form.dataset.job = job.id;
      say(status, progressText(job));
      await poll(job.id, status, (ended) => {
        say(status, "checked " + ended.progress.checked + "/" + ended.progress.total + ": opening the report…");
        window.location.assign("/documents/" + encodeURIComponent(ended.id));
      });
    } catch (error) {
      say(status, error.message, true);
    } finally {
      button.disabled = false;
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault(); // the browser has checked the fields (required, maxlength, min, max) already
    submit();
  });
})();
