"""The edge shared by the Lambda handlers: resolver, error responses, request parsing, views."""
