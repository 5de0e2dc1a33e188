# Installs the Hudi lakehouse platform into an existing cluster: namespaces, the hudi-lakehouse chart,
# and on AWS an S3 bucket with an IAM role the Spark jobs and the operator assume through workload
# identity (IRSA).

locals {
  chart           = coalesce(var.chart_path, "${path.module}/../charts/hudi-lakehouse")
  use_irsa        = var.oidc_provider_arn != ""
  oidc_issuer     = local.use_irsa ? element(split("oidc-provider/", var.oidc_provider_arn), 1) : ""
  bucket_name     = var.create_bucket ? aws_s3_bucket.lake[0].bucket : var.bucket_name
  role_arn        = local.use_irsa ? aws_iam_role.lake[0].arn : ""
  role_annotation = local.use_irsa ? { "eks.amazonaws.com/role-arn" = local.role_arn } : {}
  service_accounts = concat(
    [for ns in var.job_namespaces : "system:serviceaccount:${ns}:${var.spark_service_account}"],
    ["system:serviceaccount:${var.namespace}:hudi-lakehouse-hudi-operator"],
    ["system:serviceaccount:${var.namespace}:hudi-lakehouse-hive-metastore"],
  )
}

resource "kubernetes_namespace_v1" "platform" {
  metadata {
    name   = var.namespace
    labels = { "app.kubernetes.io/part-of" = "hudi-lakehouse" }
  }
}

resource "kubernetes_namespace_v1" "jobs" {
  for_each = toset([for ns in var.job_namespaces : ns if ns != var.namespace])
  metadata {
    name   = each.value
    labels = { "app.kubernetes.io/part-of" = "hudi-lakehouse" }
  }
}

resource "aws_s3_bucket" "lake" {
  count  = var.create_bucket ? 1 : 0
  bucket = var.bucket_name
  tags   = var.tags
}

resource "aws_s3_bucket_public_access_block" "lake" {
  count                   = var.create_bucket ? 1 : 0
  bucket                  = aws_s3_bucket.lake[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "lake" {
  count  = var.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.lake[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "aws:kms"
    }
  }
}

data "aws_iam_policy_document" "assume" {
  count = local.use_irsa ? 1 : 0
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [var.oidc_provider_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:sub"
      values   = local.service_accounts
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "lake" {
  statement {
    actions   = ["s3:ListBucket", "s3:GetBucketLocation"]
    resources = ["arn:aws:s3:::${local.bucket_name}"]
  }
  statement {
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    resources = ["arn:aws:s3:::${local.bucket_name}/*"]
  }
}

resource "aws_iam_role" "lake" {
  count              = local.use_irsa ? 1 : 0
  name               = "hudi-lakehouse-${var.namespace}"
  assume_role_policy = data.aws_iam_policy_document.assume[0].json
  tags               = var.tags
}

resource "aws_iam_role_policy" "lake" {
  count  = local.use_irsa ? 1 : 0
  name   = "lake-bucket"
  role   = aws_iam_role.lake[0].id
  policy = data.aws_iam_policy_document.lake.json
}

resource "helm_release" "lakehouse" {
  name              = "hudi-lakehouse"
  namespace         = kubernetes_namespace_v1.platform.metadata[0].name
  chart             = local.chart
  version           = var.chart_version
  dependency_update = true
  wait              = true
  timeout           = 900

  values = [yamlencode({
    # global.storage reaches every chart that touches storage (the metastore's warehouse is
    # s3a://<bucket>/warehouse); the job namespaces are one list that each subchart gets a copy of.
    global = {
      sparkServiceAccount = var.spark_service_account
      storage = {
        bucket                    = local.bucket_name
        serviceAccountAnnotations = local.role_annotation
        credentialsSecret         = var.credentials_secret
      }
    }
    jobNamespaces    = var.job_namespaces
    createNamespaces = false # kubernetes_namespace_v1.jobs makes them
    "hudi-operator" = {
      enabled         = var.components.hudi_operator
      replicaCount    = var.operator_replicas
      watchNamespaces = var.job_namespaces
    }
    "hive-metastore"        = { enabled = var.components.hive_metastore }
    "spark-operator"        = { enabled = var.components.spark_operator, spark = { jobNamespaces = var.job_namespaces } }
    strimzi                 = { enabled = var.components.strimzi, watchNamespaces = var.job_namespaces }
    kafka                   = { enabled = var.components.kafka, namespace = var.job_namespaces[0] }
    "kube-prometheus-stack" = { enabled = var.components.kube_prometheus_stack }
  })]

  depends_on = [kubernetes_namespace_v1.jobs]
}
