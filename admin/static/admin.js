// tuvan admin: the only script (no inline scripts: the CSP forbids them). Everything works
// without it; it adds a confirmation before deleting and a "select all" box for bulk actions.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var button = event.submitter;
  var question = (button && button.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
document.addEventListener("change", function (event) {
  var box = event.target;
  var group = box.getAttribute("data-select-all");
  if (!group) {
    return;
  }
  document.querySelectorAll('input[type=checkbox][data-group="' + group + '"]').forEach(function (b) {
    b.checked = box.checked;
  });
});
