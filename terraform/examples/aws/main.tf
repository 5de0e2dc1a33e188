# Example root module: the platform on an existing EKS cluster, with its own bucket and IRSA role.
#   terraform init && terraform apply -var cluster_name=my-eks -var bucket_name=my-lakehouse

variable "cluster_name" {
  description = "Name of the existing EKS cluster."
  type        = string
}

variable "bucket_name" {
  description = "Name of the S3 bucket to create for the tables."
  type        = string
}

variable "region" {
  description = "AWS region of the cluster."
  type        = string
  default     = "eu-west-1"
}

provider "aws" {
  region = var.region
}

data "aws_eks_cluster" "this" {
  name = var.cluster_name
}

data "aws_eks_cluster_auth" "this" {
  name = var.cluster_name
}

data "aws_iam_openid_connect_provider" "this" {
  url = data.aws_eks_cluster.this.identity[0].oidc[0].issuer
}

provider "kubernetes" {
  host                   = data.aws_eks_cluster.this.endpoint
  cluster_ca_certificate = base64decode(data.aws_eks_cluster.this.certificate_authority[0].data)
  token                  = data.aws_eks_cluster_auth.this.token
}

provider "helm" {
  kubernetes {
    host                   = data.aws_eks_cluster.this.endpoint
    cluster_ca_certificate = base64decode(data.aws_eks_cluster.this.certificate_authority[0].data)
    token                  = data.aws_eks_cluster_auth.this.token
  }
}

module "lakehouse" {
  source            = "../.."
  bucket_name       = var.bucket_name
  oidc_provider_arn = data.aws_iam_openid_connect_provider.this.arn
  operator_replicas = 2
  tags              = { project = "lakehouse" }
}

output "lakehouse" {
  description = "Where the platform put things."
  value = {
    namespace     = module.lakehouse.namespace
    bucket        = module.lakehouse.bucket_name
    role          = module.lakehouse.iam_role_arn
    spark_account = module.lakehouse.spark_service_account
  }
}
