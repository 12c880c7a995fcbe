// Live what-if on a problem page (issue 51, Build 2): as a field of the new-variant form
// changes, the form is posted to /api/problems/ID/whatif (a re-solve with a time limit,
// verified, nothing stored) and the total, its change against the base plan and the lines
// that changed are shown in #whatif, without a reload. A newer change aborts the older
// request; a refused field's message goes beside the field, as "Add variant" shows it.
"use strict";

(function () {
  function usd(v) {
    const sign = v < 0 && Math.round(Math.abs(v) * 100) > 0 ? "-" : "";
    return sign + "$" + Math.abs(v).toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
  }
  function signed(v) { return (v > 0 ? "+" : "") + usd(v); }

  function start() {
    const box = document.getElementById("whatif");
    const form = document.getElementById("new-variant");
    if (!box || !form) return;
    const total = document.getElementById("whatif-total");
    const change = document.getElementById("whatif-change");
    const status = document.getElementById("whatif-status");
    const error = document.getElementById("whatif-error");
    const body = document.querySelector("#whatif-lines tbody");
    let pending = null;
    let timer = null;
    let asked = 0;

    function clearFieldErrors() {
      form.querySelectorAll(".whatif-field-error").forEach((n) => n.remove());
    }
    function showError(e) {
      clearFieldErrors();
      error.textContent = e.message; error.hidden = false;
      const field = e.at && form.querySelector("[name='" + e.at + "']");
      if (field) {
        const note = document.createElement("pre");
        note.className = "error field-error whatif-field-error";
        note.dataset.field = e.at;
        note.textContent = e.message;
        (field.closest("label") || field).after(note);
      }
    }
    function show(a) {
      clearFieldErrors();
      error.hidden = true;
      total.textContent = usd(a.total_cost_usd);
      change.textContent = signed(a.change_usd);
      box.dataset.total = a.total_cost_usd;
      box.dataset.regions = a.regions.join(",");
      status.textContent = "(" + a.status + (a.verified ? ", verified" : "") + ", " + a.seconds.toFixed(1) + " s)";
      body.replaceChildren(...a.lines.map((l) => {
        const tr = document.createElement("tr");
        for (const v of [l.line, usd(l.base_cost_usd), usd(l.cost_usd), signed(l.change_usd)]) {
          const td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
        }
        return tr;
      }));
    }
    function ask() {
      if (pending) pending.abort();
      pending = new AbortController();
      const n = ++asked;
      box.dataset.state = "solving";
      status.textContent = "(solving...)";
      fetch("/api/problems/" + box.dataset.problem + "/whatif", {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        signal: pending.signal,
        headers: {"Accept": "application/json"},
      }).then((r) => r.json()).then((a) => {
        if (n !== asked) return;
        if (a.error) showError(a.error); else show(a);
        box.dataset.state = a.error ? "refused" : "done";
      }).catch((e) => {
        if (e.name === "AbortError") return;
        showError({message: "the what-if did not answer: " + e.message});
        box.dataset.state = "failed";
      });
    }
    function later() { clearTimeout(timer); timer = setTimeout(ask, 400); }
    form.addEventListener("change", later);
    form.addEventListener("input", later);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
