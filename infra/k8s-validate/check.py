"""Validates rendered manifests (kustomize build output, one file per render).

Usage: check.py <kubernetes versions, comma separated> <label>=<file> ...
Each object is validated strictly (unknown fields are errors) against the Kubernetes schemas that
kubernetes-validate ships, for every version given. Objects of custom resources (KEDA, Prometheus
Operator) have no schema there: they are checked here for what the portal relies on, and listed.
Then the portal's own rules, which no schema knows:
  - a render of the base, an overlay or a component never holds a Secret, except the example
    overlay's, made by its secretGenerator (so apply never overwrites a Secret made by hand);
  - every image of an overlay carries a version tag, never `latest`;
  - no Deployment that an autoscaler manages sets spec.replicas;
  - pods mount no service account token; each emptyDir has a sizeLimit and its container
    requests ephemeral storage;
  - every ConfigMap and Secret a pod refers to is in the render (or optional), and every
    autoscaler, PodMonitor and NetworkPolicy selects something.
Exits 1 with one line per problem.
"""
import sys
import yaml
import kubernetes_validate
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError

CUSTOM = {
    ('keda.sh/v1alpha1', 'ScaledObject'),
    ('monitoring.coreos.com/v1', 'PodMonitor'),
    ('monitoring.coreos.com/v1', 'ServiceMonitor'),
    ('monitoring.coreos.com/v1', 'PrometheusRule'),
}
WORKLOADS = {'Deployment', 'Job', 'StatefulSet', 'DaemonSet'}


def name(obj):
    return f"{obj['kind']}/{obj['metadata']['name']}"


def pod_of(obj):
    return obj['spec']['template'] if obj['kind'] in WORKLOADS else None


def labels_match(selector, labels):
    for key, value in (selector.get('matchLabels') or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get('matchExpressions') or []:
        have = labels.get(expr['key'])
        if expr['operator'] == 'In' and have not in expr['values']:
            return False
        if expr['operator'] == 'NotIn' and have in expr['values']:
            return False
        if expr['operator'] == 'Exists' and have is None:
            return False
    return True


def check_custom(obj, objects, problems):
    kind, spec = obj['kind'], obj.get('spec') or {}
    deployments = {o['metadata']['name']: o for o in objects if o['kind'] == 'Deployment'}
    if kind == 'ScaledObject':
        target = (spec.get('scaleTargetRef') or {}).get('name')
        if target not in deployments:
            problems.append(f"{name(obj)}: scaleTargetRef {target!r} is no Deployment of the render")
        if not spec.get('triggers'):
            problems.append(f"{name(obj)}: no triggers")
        for hpa in objects:
            if hpa['kind'] == 'HorizontalPodAutoscaler' and hpa['spec']['scaleTargetRef']['name'] == target:
                problems.append(f"{name(obj)}: {name(hpa)} scales {target} too (two autoscalers fight)")
    elif kind in ('PodMonitor', 'ServiceMonitor'):
        selector = spec.get('selector') or {}
        pods = [pod_of(o)['metadata'].get('labels') or {} for o in deployments.values()]
        if not any(labels_match(selector, labels) for labels in pods):
            problems.append(f"{name(obj)}: selects no pod of the render")
        ports = {p.get('name') for o in deployments.values() for c in pod_of(o)['spec']['containers'] for p in c.get('ports') or []}
        for endpoint in spec.get('podMetricsEndpoints') or spec.get('endpoints') or []:
            if endpoint.get('port') not in ports:
                problems.append(f"{name(obj)}: port {endpoint.get('port')!r} is no container port name")
    elif kind == 'PrometheusRule':
        for group in spec.get('groups') or []:
            for rule in group.get('rules') or []:
                if not rule.get('expr') or not (rule.get('alert') or rule.get('record')):
                    problems.append(f"{name(obj)}: a rule of {group.get('name')} lacks expr or alert")


def check_rules(label, objects, problems):
    by_kind = {}
    for obj in objects:
        by_kind.setdefault(obj['kind'], []).append(obj)
    if 'Secret' in by_kind and not label.startswith('overlays/example'):
        problems.append(f"{label}: holds Secrets ({', '.join(name(o) for o in by_kind['Secret'])}): apply would overwrite real ones")
    scaled = {o['spec']['scaleTargetRef']['name'] for o in by_kind.get('HorizontalPodAutoscaler', [])}
    scaled |= {o['spec']['scaleTargetRef']['name'] for o in by_kind.get('ScaledObject', [])}
    present = {(o['kind'], o['metadata']['name']) for o in objects}
    for obj in objects:
        pod = pod_of(obj)
        if pod is None:
            continue
        spec = pod['spec']
        if obj['kind'] == 'Deployment' and obj['metadata']['name'] in scaled and 'replicas' in obj['spec']:
            problems.append(f"{label}: {name(obj)} sets spec.replicas but an autoscaler manages it")
        if spec.get('automountServiceAccountToken') is not False:
            problems.append(f"{label}: {name(obj)} mounts a service account token")
        scratch = {v['name'] for v in spec.get('volumes') or [] if 'emptyDir' in v}
        for volume in spec.get('volumes') or []:
            if 'emptyDir' in volume and 'sizeLimit' not in (volume['emptyDir'] or {}):
                problems.append(f"{label}: {name(obj)} volume {volume['name']} has no sizeLimit")
        for container in spec['containers']:
            image = container['image']
            tag = image.rsplit('/', 1)[-1].partition(':')[2]
            if label.startswith('overlays/') and (not tag or tag == 'latest'):
                problems.append(f"{label}: {name(obj)} image {image} has no version tag")
            mounts = {m['name'] for m in container.get('volumeMounts') or []}
            if mounts & scratch and 'ephemeral-storage' not in ((container.get('resources') or {}).get('requests') or {}):
                problems.append(f"{label}: {name(obj)} container {container['name']} requests no ephemeral-storage for its scratch volume")
            for source in container.get('envFrom') or []:
                for kind, key in (('ConfigMap', 'configMapRef'), ('Secret', 'secretRef')):
                    ref = source.get(key)
                    # Secrets are made by hand before the apply, except by the example overlay.
                    checked = kind == 'ConfigMap' or label.startswith('overlays/example')
                    if ref and checked and not ref.get('optional') and (kind, ref['name']) not in present:
                        problems.append(f"{label}: {name(obj)} refers to {kind}/{ref['name']}, not in the render")
    pods = [pod_of(o)['metadata'].get('labels') or {} for o in objects if pod_of(o)]
    for policy in by_kind.get('NetworkPolicy', []):
        selector = policy['spec']['podSelector']
        if selector and not any(labels_match(selector, labels) for labels in pods):
            problems.append(f"{label}: {name(policy)} selects no pod")
    for hpa in by_kind.get('HorizontalPodAutoscaler', []):
        if ('Deployment', hpa['spec']['scaleTargetRef']['name']) not in present:
            problems.append(f"{label}: {name(hpa)} scales a Deployment that is not in the render")


def main():
    versions = sys.argv[1].split(',')
    problems = []
    for arg in sys.argv[2:]:
        label, _, path = arg.partition('=')
        with open(path) as f:
            objects = [o for o in yaml.safe_load_all(f) if o]
        custom = []
        for obj in objects:
            if (obj['apiVersion'], obj['kind']) in CUSTOM:
                custom.append(name(obj))
                check_custom(obj, objects, problems)
                continue
            for version in versions:
                try:
                    kubernetes_validate.validate(obj, version, strict=True)
                except ValidationError as e:
                    where = '.'.join(str(p) for p in e.path)
                    problems.append(f"{label}: {name(obj)} is invalid for Kubernetes {version}: {where}: {e.message}")
                except SchemaNotFoundError:
                    problems.append(f"{label}: {name(obj)} ({obj['apiVersion']}) has no schema for Kubernetes {version}")
        check_rules(label, objects, problems)
        note = f"; custom resources checked by their references (no schema): {', '.join(custom)}" if custom else ''
        print(f"k8s: {label}: {len(objects) - len(custom)} objects valid for Kubernetes {', '.join(versions)}{note}")
    for problem in problems:
        print(f"k8s: PROBLEM {problem}")
    sys.exit(1 if problems else 0)


main()
