// The version picker of the API reference page (microversion-server's
// `ReferencePage`): shows the OpenAPI document of the chosen microversion
// with Swagger UI, and keeps the choice in the page's address.
(function () {
  "use strict";
  var picker = document.getElementById("mv-version");
  var documentUrl = picker.getAttribute("data-document");
  var ui = null;

  function documentOf(version) {
    if (version === "all") {
      return documentUrl;
    }
    var separator = documentUrl.indexOf("?") < 0 ? "?" : "&";
    return documentUrl + separator + "version=" + encodeURIComponent(version);
  }

  function show(version) {
    var url = documentOf(version);
    document.body.setAttribute("data-version", version);
    if (ui === null) {
      ui = SwaggerUIBundle({
        url: url,
        dom_id: "#mv-reference",
        // No online validator: nothing is fetched but from this server.
        validatorUrl: null,
        // The `x-openstack` version ranges of the whole range's document.
        showExtensions: true,
        deepLinking: false,
        docExpansion: "list",
        defaultModelsExpandDepth: 0
      });
    } else {
      ui.specActions.updateUrl(url);
      ui.specActions.download(url);
    }
  }

  function offered(version) {
    for (var i = 0; i < picker.options.length; i++) {
      if (picker.options[i].value === version) {
        return true;
      }
    }
    return false;
  }

  var params = new URLSearchParams(window.location.search);
  var asked = params.get("version");
  if (asked !== null && offered(asked)) {
    picker.value = asked;
  }
  picker.addEventListener("change", function () {
    params.set("version", picker.value);
    window.history.replaceState(null, "", "?" + params.toString());
    show(picker.value);
  });
  show(picker.value);
})();
