// The pages' only script (docs/web.md): shows the print button, which needs script to work.
// Everything else works without it.
document.querySelectorAll("[data-print]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
});
