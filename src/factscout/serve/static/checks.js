// factscout page: checks a claim through the job API (POST /v1/checks, then GET /v1/checks/{id})
// and shows the progress ("checking… 0/1") instead of holding the request open; when the job is
// done it opens the report's shareable link with &job=ID, which the server renders from the stored
// report. Without this script the form still works (a plain GET of the page). Text is only ever
// put into the page with textContent. An example claim on the empty page is put into the claim
// box (its link, without this script, checks it at once).
"use strict";

(function () {
  const form = document.getElementById("claim-form");
  const progress = document.getElementById("progress");
  if (!form || !progress) return;
  const POLL_MS = 300;

  function show(text, isError) {
    progress.hidden = false;
    progress.textContent = text;
    progress.className = isError ? "error" : "muted";
    progress.setAttribute("role", isError ? "alert" : "status");
  }

  function pageLink(jobId) {
    const params = new URLSearchParams();
    params.set("claim", form.elements.claim.value);
    if (form.elements.date.value) params.set("date", form.elements.date.value);
    if (form.elements.evidence.value === "all") params.set("evidence", "all");
    if (form.elements.claim_id.value) params.set("claim_id", form.elements.claim_id.value);
    params.set("job", jobId);
    return "/?" + params.toString();
  }

  async function poll(jobId) {
    for (;;) {
      const response = await fetch("/v1/checks/" + encodeURIComponent(jobId), { headers: { Accept: "application/json" } });
      const job = await response.json();
      if (!response.ok) throw new Error(job.error || "request failed (" + response.status + ")");
      if (job.status === "done") {
        show("checked " + job.done + "/" + job.total + ": opening the report…");
        window.location.assign(pageLink(jobId));
        return;
      }
      if (job.status === "failed") throw new Error(job.errors.length ? job.errors[0].error : "the check failed");
      show((job.status === "queued" ? "queued… " : "checking… ") + job.done + "/" + job.total);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async function submit() {
    const body = { claim: form.elements.claim.value, date_filter: form.elements.evidence.value !== "all" };
    if (form.elements.date.value) body.date = form.elements.date.value;
    if (form.elements.claim_id.value) body.claim_id = form.elements.claim_id.value;
    show("sending…");
    const button = document.getElementById("check");
    button.disabled = true;
    try {
      const response = await fetch("/v1/checks", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
      });
      const job = await response.json();
      if (response.status !== 202) throw new Error(job.error || "request failed (" + response.status + ")");
      form.dataset.job = job.id;
      show("queued… 0/" + job.total);
      await poll(job.id);
    } catch (error) {
      show(error.message, true);
    } finally {
      button.disabled = false;
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault(); // the browser has checked the fields (required, maxlength) already
    submit();
  });

  for (const example of document.querySelectorAll("a.example")) {
    example.addEventListener("click", (event) => {
      event.preventDefault();
      form.elements.claim.value = example.dataset.claim || "";
      form.elements.date.value = example.dataset.date || "";
      form.elements.claim.focus();
    });
  }

  // a page opened on a job that had not finished yet (?job=ID): go on polling it
  if (progress.dataset.job) {
    show("checking…");
    poll(progress.dataset.job).catch((error) => show(error.message, true));
  }
})();
