// The pages' only script (docs/web.md): shows the print button, which needs script to work, and
// checks the rules console's draft as it is typed. Everything else works without it.
document.querySelectorAll("[data-print]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
});

// The rules console's draft (data-live-check): the form posted to the same check a post runs,
// a moment after each edit; each problem shown at its place, the count in a live region.
// Without script the draft's Check button does the same.
document.querySelectorAll("form[data-live-check]").forEach(function (form) {
  var status = form.querySelector("[data-live-status]");
  var timer = null;
  function show(problems) {
    form.querySelectorAll(".error").forEach(function (e) { e.remove(); });
    form.querySelectorAll("[aria-invalid]").forEach(function (e) {
      e.removeAttribute("aria-invalid");
      e.removeAttribute("aria-describedby");
    });
    problems.forEach(function (p) {
      var input = form.elements.namedItem(p.path === "" ? "yaml" : "f:" + p.path);
      var place = input && input.closest ? input.closest(".field, .pane") : null;
      if (!place) return;
      var message = document.createElement("p");
      message.className = "error";
      message.id = "e:" + p.path;
      message.textContent = p.reason;
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", message.id);
      place.appendChild(message);
    });
    status.textContent = problems.length === 0
      ? form.dataset.none : form.dataset.some.replace("{count}", problems.length);
  }
  function check() {
    fetch(form.dataset.liveCheck, {
      method: "POST", credentials: "same-origin", body: new URLSearchParams(new FormData(form)),
    }).then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) { if (body) show(body.problems); })
      .catch(function () {});
  }
  function soon(ms) { clearTimeout(timer); timer = setTimeout(check, ms); }
  form.addEventListener("input", function () { soon(400); });
  form.addEventListener("change", function () { soon(100); });
});
