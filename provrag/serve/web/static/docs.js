/* /docs: Swagger UI (static/swagger/, served from the wheel) over this server's OpenAPI schema.
   validatorUrl null: Swagger UI would otherwise send the schema to an online validator. */
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  showExtensions: true,
  showCommonExtensions: true
});
