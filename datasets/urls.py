from django.urls import path

from datasets import views

app_name = "datasets"
urlpatterns = [
    path("", views.index, name="index"),
    path("releases/", views.release_list, name="releases"),
    path("releases/build/", views.release_build, name="release-build"),
    path("releases/<int:number>/", views.release_detail, name="release"),
    path("releases/<int:number>/<str:name>", views.release_file, name="release-file"),
    path("<slug:table>.<slug:fmt>", views.export, name="export"),
]
