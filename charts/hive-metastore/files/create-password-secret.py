"""Creates the bundled database's password Secret unless it exists (a Helm pre-install/pre-upgrade hook).

The password is made once, in the cluster, and never rendered: `helm template` (Argo CD) gives the same
objects every time, and an upgrade or a re-sync keeps the password the database was initialised with.
Python's standard library only (the metastore image has no Kubernetes client); the API server and the
service account are the pod's own, unless KUBERNETES_API names another server (no CA then needed)."""
import json
import os
import secrets
import ssl
import urllib.error
import urllib.request

ACCOUNT = os.environ.get("SERVICE_ACCOUNT_DIR", "/var/run/secrets/kubernetes.io/serviceaccount")
API = os.environ.get("KUBERNETES_API") or "https://{}:{}".format(
    os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
NAMESPACE, NAME, KEY = os.environ["NAMESPACE"], os.environ["SECRET_NAME"], os.environ["SECRET_KEY"]


def call(method, path, body=None):
    with open(os.path.join(ACCOUNT, "token")) as token:
        headers = {"Authorization": "Bearer " + token.read().strip(), "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body).encode()
    context = None
    if API.startswith("https:"):
        context = ssl.create_default_context(cafile=os.path.join(ACCOUNT, "ca.crt"))
    request = urllib.request.Request(API + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        return json.load(response)


def main():
    secrets_path = "/api/v1/namespaces/{}/secrets".format(NAMESPACE)
    try:
        call("GET", "{}/{}".format(secrets_path, NAME))
        print("Secret {}/{} exists: kept".format(NAMESPACE, NAME))
        return
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": json.loads(os.environ.get("LABELS", "{}"))},
              "stringData": {KEY: secrets.token_urlsafe(32)}}
    try:
        call("POST", secrets_path, secret)
        print("Secret {}/{} created".format(NAMESPACE, NAME))
    except urllib.error.HTTPError as error:
        if error.code != 409:           # 409: another run made it meanwhile, which is as good
            raise


if __name__ == "__main__":
    main()
